package github

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	gh "github.com/google/go-github/v60/github"

	"github.com/kptbot/kptbot/forge/github/githubtest"
)

func loadAPIContract(t testing.TB) *githubtest.Contract { return githubtest.LoadContract(t) }

func TestAPIContractAcceptsAndRejects(t *testing.T) {
	t.Parallel()
	c := loadAPIContract(t)
	tests := []struct {
		name, method, target, body string
		wantErr                    string
	}{
		{"merge with sha", "PUT", "/repos/acme/site-a/pulls/7/merge", `{"sha":"0123456789abcdef0123456789abcdef01234567","merge_method":"squash"}`, ""},
		{"merge method unknown", "PUT", "/repos/acme/site-a/pulls/7/merge", `{"sha":"abc","merge_method":"fast"}`, "merge_method"},
		{"create tag object", "POST", "/repos/acme/up/git/tags", `{"tag":"basens/v2","message":"v2","object":"0123456789abcdef0123456789abcdef01234567","type":"commit"}`, ""},
		{"create tag without object", "POST", "/repos/acme/up/git/tags", `{"tag":"basens/v2","message":"v2","type":"commit"}`, "object"},
		{"check run", "POST", "/repos/acme/site-a/check-runs", `{"name":"kptbot/render","head_sha":"abc","status":"completed","conclusion":"success"}`, ""},
		{"check run without head_sha", "POST", "/repos/acme/site-a/check-runs", `{"name":"kptbot/render"}`, "head_sha"},
		{"list pulls by head", "GET", "/repos/acme/site-a/pulls?head=acme:kptbot/update&state=all&per_page=100", "", ""},
		{"list pulls bad state", "GET", "/repos/acme/site-a/pulls?state=merged", "", "state"},
		{"permission", "GET", "/repos/acme/site-a/collaborators/alice/permission", "", ""},
		{"dispatch", "POST", "/repos/acme/site-a/dispatches", `{"event_type":"kptbot-upstream-tag","client_payload":{"tag":"basens/v2"}}`, ""},
		{"not an operation", "DELETE", "/repos/acme/site-a", "", "not an operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req := httptest.NewRequest(tt.method, tt.target, body)
			if tt.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			err := c.Check(req)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("check() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("check() = %v, want an error mentioning %q", err, tt.wantErr)
			}
		})
	}
}

// TestGoGitHubRequestsConform sends the writes the adapter is built from
// through go-github v60 to a server that enforces GitHub's description, so
// a go-github field or encoding GitHub would reject shows up here.
func TestGoGitHubRequestsConform(t *testing.T) {
	t.Parallel()
	c := loadAPIContract(t)
	var seen []string
	srv := httptest.NewServer(c.Middleware(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/merge"):
			fmt.Fprint(w, `{"sha":"0123456789abcdef0123456789abcdef01234567","merged":true,"message":"Pull Request successfully merged"}`)
		default:
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{}`)
		}
	})))
	defer srv.Close()
	client := gh.NewClient(srv.Client())
	base, err := url.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	client.BaseURL = base
	ctx := context.Background()
	sha := "0123456789abcdef0123456789abcdef01234567"
	if _, _, err := client.PullRequests.Merge(ctx, "acme", "site-a", 7, "", &gh.PullRequestOptions{SHA: sha, MergeMethod: "squash"}); err != nil {
		t.Errorf("Merge: %v", err)
	}
	if _, _, err := client.Git.CreateTag(ctx, "acme", "up", &gh.Tag{Tag: gh.String("basens/v2"), Message: gh.String("v2"), Object: &gh.GitObject{SHA: &sha, Type: gh.String("commit")}}); err != nil {
		t.Errorf("CreateTag: %v", err)
	}
	if _, _, err := client.Checks.CreateCheckRun(ctx, "acme", "site-a", gh.CreateCheckRunOptions{Name: "kptbot/render", HeadSHA: sha, Status: gh.String("completed"), Conclusion: gh.String("success")}); err != nil {
		t.Errorf("CreateCheckRun: %v", err)
	}
	if _, _, err := client.Repositories.Dispatch(ctx, "acme", "site-a", gh.DispatchRequestOptions{EventType: "kptbot-upstream-tag"}); err != nil {
		t.Errorf("Dispatch: %v", err)
	}
	if len(seen) != 4 {
		t.Errorf("server handled %v, want 4 conforming requests", seen)
	}
}
