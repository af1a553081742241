package github

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	gh "github.com/google/go-github/v60/github"
)

// apiContract validates requests against GitHub's own OpenAPI description
// (trimmed by testdata/openapi/trim.py to the operations kptbot calls), so
// a fake GitHub server can refuse anything the real one would.
type apiContract struct {
	router routers.Router
}

func loadAPIContract(t testing.TB) *apiContract {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile("testdata/openapi/github-trimmed.json")
	if err != nil {
		t.Fatalf("loading GitHub OpenAPI description: %v", err)
	}
	// Match any host: requests go to httptest servers, not api.github.com.
	doc.Servers = openapi3.Servers{{URL: "/"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("routing GitHub OpenAPI description: %v", err)
	}
	return &apiContract{router: router}
}

// check validates one request (method, path, query, headers and JSON body)
// and names the operation and the failing part when it does not conform.
func (c *apiContract) check(req *http.Request) error {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return fmt.Errorf("reading request body: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	route, params, err := c.router.FindRoute(routable(req))
	if err != nil {
		return fmt.Errorf("%s %s: not an operation in GitHub's API description: %w", req.Method, req.URL.Path, err)
	}
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	err = openapi3filter.ValidateRequest(context.Background(), in)
	if body != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	if err != nil {
		return fmt.Errorf("%s %s (%s): %w", req.Method, req.URL.Path, route.Operation.OperationID, err)
	}
	return nil
}

// routable works around the router's path parameters, which stop at a
// slash, while GitHub's contents {path} and git {ref} span several
// segments: the rest of such a path is matched as one escaped segment.
func routable(req *http.Request) *http.Request {
	rest, ok := strings.CutPrefix(req.URL.Path, "/repos/")
	if !ok {
		return req
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 3 {
		return req
	}
	for _, prefix := range []string{"contents/", "git/ref/", "git/refs/", "git/matching-refs/"} {
		tail, ok := strings.CutPrefix(parts[2], prefix)
		if !ok || !strings.Contains(tail, "/") {
			continue
		}
		r := req.Clone(req.Context())
		r.URL.Path = "/repos/" + parts[0] + "/" + parts[1] + "/" + prefix + strings.ReplaceAll(tail, "/", "%2F")
		r.URL.RawPath = r.URL.Path
		return r
	}
	return req
}

// middleware answers 422 with the reason to any request GitHub's
// description rejects, and records the failure on t.
func (c *apiContract) middleware(t testing.TB, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// GraphQL is outside the REST description; its handler checks it.
		if r.URL.Path == "/graphql" {
			next.ServeHTTP(w, r)
			return
		}
		if err := c.check(r); err != nil {
			t.Errorf("request violates GitHub's OpenAPI description: %v", err)
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		next.ServeHTTP(w, r)
	})
}

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
			err := c.check(req)
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
	srv := httptest.NewServer(c.middleware(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
