package github

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kptbot/kptbot/forge"
)

const (
	shaMain = "1111111111111111111111111111111111111111"
	shaTag1 = "2222222222222222222222222222222222222222"
	shaTag2 = "3333333333333333333333333333333333333333"
	shaHead = "4444444444444444444444444444444444444444"
)

// fakeGitHub serves the read API with GitHub's JSON shapes, pagination
// Link headers and error bodies, behind the OpenAPI request check.
func fakeGitHub(t *testing.T) *Client {
	t.Helper()
	mux := http.NewServeMux()
	var srvURL string
	notFound := func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
	}
	mux.HandleFunc("GET /repos/acme/site-a/contents/{path...}", func(w http.ResponseWriter, r *http.Request) {
		switch r.PathValue("path") {
		case "sites/a/Kptfile":
			if r.URL.Query().Get("ref") != "main" {
				notFound(w)
				return
			}
			fmt.Fprintf(w, `{"type":"file","encoding":"base64","size":14,"name":"Kptfile","path":"sites/a/Kptfile","sha":"aaaa","content":%q}`,
				base64.StdEncoding.EncodeToString([]byte("kind: Kptfile\n")))
		case "big.yaml":
			fmt.Fprint(w, `{"type":"file","encoding":"none","size":2000000,"name":"big.yaml","path":"big.yaml","sha":"bbbb","content":""}`)
		case "sites":
			fmt.Fprint(w, `[{"type":"dir","name":"a","path":"sites/a","sha":"cccc","size":0}]`)
		default:
			notFound(w)
		}
	})
	mux.HandleFunc("GET /repos/acme/site-a/git/blobs/bbbb", func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "raw") {
			t.Errorf("blob read without the raw media type: Accept %q", r.Header.Get("Accept"))
		}
		fmt.Fprint(w, "big: true\n")
	})
	mux.HandleFunc("GET /repos/acme/site-a/git/trees/main", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("recursive") == "" {
			t.Errorf("tree read without recursive")
		}
		fmt.Fprint(w, `{"sha":"dddd","truncated":false,"tree":[
			{"path":"sites","type":"tree","mode":"040000","sha":"e1"},
			{"path":"sites/a","type":"tree","mode":"040000","sha":"e2"},
			{"path":"sites/a/Kptfile","type":"blob","mode":"100644","sha":"e3","size":14},
			{"path":"sites/ab/Kptfile","type":"blob","mode":"100644","sha":"e4","size":14},
			{"path":"README.md","type":"blob","mode":"100644","sha":"e5","size":3}]}`)
	})
	mux.HandleFunc("GET /repos/acme/site-a/git/trees/huge", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"sha":"ffff","truncated":true,"tree":[]}`)
	})
	mux.HandleFunc("GET /repos/acme/site-a/tags", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			fmt.Fprintf(w, `[{"name":"basens/v1","commit":{"sha":%q,"url":"u"},"zipball_url":"z","tarball_url":"t","node_id":"n"}]`, shaTag1)
			return
		}
		w.Header().Set("Link", fmt.Sprintf(`<%s/repos/acme/site-a/tags?per_page=100&page=2>; rel="next", <%s/repos/acme/site-a/tags?per_page=100&page=2>; rel="last"`, srvURL, srvURL))
		fmt.Fprintf(w, `[{"name":"basens/v2","commit":{"sha":%q,"url":"u"},"zipball_url":"z","tarball_url":"t","node_id":"n"}]`, shaTag2)
	})
	mux.HandleFunc("GET /repos/acme/limited/tags", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`)
	})
	mux.HandleFunc("GET /repos/acme/site-a/branches", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `[{"name":"main","commit":{"sha":%q,"url":"u"},"protected":true},{"name":"kptbot/x","commit":{"sha":%q,"url":"u"},"protected":false}]`, shaMain, shaHead)
	})
	mux.HandleFunc("GET /repos/acme/site-a/pulls", func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query(); q.Get("head") != "acme:kptbot/x" || q.Get("state") != "all" {
			t.Errorf("pulls listed with %v, want head=acme:kptbot/x state=all", q)
		}
		fmt.Fprintf(w, `[{"number":7,"state":"closed","title":"Update basens to v2","body":"b","draft":false,
			"merged_at":"2026-11-20T10:00:00Z","merge_commit_sha":%q,"html_url":"https://github.com/acme/site-a/pull/7",
			"user":{"login":"kptbot[bot]","id":9,"type":"Bot"},"labels":[{"name":"kptbot"}],
			"head":{"ref":"kptbot/x","sha":%q,"repo":{"full_name":"acme/site-a"}},
			"base":{"ref":"main","sha":%q,"repo":{"full_name":"acme/site-a"}}}]`, shaMain, shaHead, shaTag1)
	})
	mux.HandleFunc("GET /repos/acme/site-a/pulls/7/reviews", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `[{"id":80,"state":"APPROVED","commit_id":%q,"body":"lgtm","user":{"login":"alice","id":1,"type":"User"}},
			{"id":81,"state":"CHANGES_REQUESTED","commit_id":%q,"body":"","user":{"login":"bob","id":2,"type":"User"}}]`, shaHead, shaTag1)
	})
	mux.HandleFunc("GET /repos/acme/site-a/collaborators/{user}/permission", func(w http.ResponseWriter, r *http.Request) {
		switch r.PathValue("user") {
		case "alice":
			fmt.Fprint(w, `{"permission":"write","role_name":"maintain","user":{"login":"alice","id":1}}`)
		case "odd":
			fmt.Fprint(w, `{"permission":"superuser","role_name":"x","user":{"login":"odd","id":3}}`)
		default:
			notFound(w)
		}
	})
	mux.HandleFunc("GET /installation/repositories", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"total_count":2,"repositories":[
			{"id":2,"full_name":"acme/site-b","default_branch":"main","clone_url":"https://github.com/acme/site-b.git","topics":["site"],"private":true},
			{"id":1,"full_name":"acme/site-a","default_branch":"main","clone_url":"https://github.com/acme/site-a.git","topics":["site"]}]}`)
	})
	srv := httptest.NewServer(loadAPIContract(t).Middleware(t, mux))
	t.Cleanup(srv.Close)
	srvURL = srv.URL
	c, err := NewClient(srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := fakeGitHub(t)
	site := forge.Repo{Forge: forge.GitHub, FullName: "acme/site-a"}

	if b, err := c.ReadFile(ctx, site, "main", "sites/a/Kptfile"); err != nil || string(b) != "kind: Kptfile\n" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if b, err := c.ReadFile(ctx, site, "main", "big.yaml"); err != nil || string(b) != "big: true\n" {
		t.Errorf("ReadFile(over 1 MB) = %q, %v; want the raw blob", b, err)
	}
	for _, tc := range []struct{ ref, path string }{{"v9", "sites/a/Kptfile"}, {"main", "missing"}, {"main", "sites"}} {
		if _, err := c.ReadFile(ctx, site, tc.ref, tc.path); !errors.Is(err, forge.ErrNotFound) {
			t.Errorf("ReadFile(%s, %s) error = %v, want ErrNotFound", tc.ref, tc.path, err)
		}
	}
	if got, err := c.ListTree(ctx, site, "main", "sites/a"); err != nil || !cmp.Equal(got, []string{"sites/a/Kptfile"}) {
		t.Errorf("ListTree(sites/a) = %v, %v", got, err)
	}
	if _, err := c.ListTree(ctx, site, "huge", ""); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("ListTree(truncated) error = %v, want a truncation error", err)
	}

	tags, err := c.ListTags(ctx, site)
	if diff := cmp.Diff([]forge.Tag{{Name: "basens/v1", SHA: shaTag1}, {Name: "basens/v2", SHA: shaTag2}}, tags); err != nil || diff != "" {
		t.Errorf("ListTags over two pages: err %v, diff (-want +got):\n%s", err, diff)
	}
	branches, err := c.ListBranches(ctx, site)
	if diff := cmp.Diff([]forge.Branch{{Name: "kptbot/x", SHA: shaHead}, {Name: "main", SHA: shaMain}}, branches); err != nil || diff != "" {
		t.Errorf("ListBranches: err %v, diff (-want +got):\n%s", err, diff)
	}

	changes, err := c.ListChangesByHead(ctx, site, "kptbot/x")
	wantChange := forge.Change{Number: 7, Title: "Update basens to v2", Body: "b", State: "merged", HeadRef: "kptbot/x", HeadSHA: shaHead,
		BaseRef: "main", BaseSHA: shaTag1, Author: forge.User{Login: "kptbot[bot]", ID: 9, Bot: true}, Labels: []string{"kptbot"},
		Merged: true, MergeCommitSHA: shaMain, URL: "https://github.com/acme/site-a/pull/7"}
	if diff := cmp.Diff([]forge.Change{wantChange}, changes); err != nil || diff != "" {
		t.Errorf("ListChangesByHead: err %v, diff (-want +got):\n%s", err, diff)
	}
	reviews, err := c.ListReviews(ctx, site, 7)
	wantReviews := []forge.Review{
		{ID: 80, State: forge.ReviewApproved, Reviewer: forge.User{Login: "alice", ID: 1}, CommitSHA: shaHead, Body: "lgtm"},
		{ID: 81, State: forge.ReviewChangesRequested, Reviewer: forge.User{Login: "bob", ID: 2}, CommitSHA: shaTag1},
	}
	if diff := cmp.Diff(wantReviews, reviews); err != nil || diff != "" {
		t.Errorf("ListReviews: err %v, diff (-want +got):\n%s", err, diff)
	}

	for login, want := range map[string]forge.Permission{"alice": forge.PermissionWrite, "mallory": forge.PermissionNone} {
		if got, err := c.Permission(ctx, site, login); err != nil || got != want {
			t.Errorf("Permission(%s) = %v, %v; want %v", login, got, err, want)
		}
	}
	if _, err := c.Permission(ctx, site, "odd"); err == nil || !strings.Contains(err.Error(), `"superuser"`) {
		t.Errorf("Permission(unknown level) error = %v, want it named", err)
	}

	repos, err := c.ListRepos(ctx)
	if err != nil || len(repos) != 2 || repos[0].FullName != "acme/site-a" || !repos[1].Private || repos[1].Topics[0] != "site" {
		t.Errorf("ListRepos = %+v, %v", repos, err)
	}
}

func TestClientRateLimitAndBadRepo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := fakeGitHub(t)
	before := time.Now()
	_, err := c.ListTags(ctx, forge.Repo{FullName: "acme/limited"})
	var rl *forge.RateLimitError
	if !errors.Is(err, forge.ErrRateLimited) || !errors.As(err, &rl) {
		t.Fatalf("secondary rate limit: error = %v, want ErrRateLimited", err)
	}
	if wait := rl.RetryAt.Sub(before); wait < 29*time.Second || wait > 40*time.Second {
		t.Errorf("RetryAt is %v after the request, want Retry-After's 30s", wait)
	}
	if _, err := c.ListTags(ctx, forge.Repo{FullName: "no-slash"}); err == nil || !strings.Contains(err.Error(), "want owner/name") {
		t.Errorf("bad repository name: error = %v", err)
	}
}
