// Package githubtest is a stateful GitHub for tests: repository content in
// real bare git repositories served over HTTP by git http-backend, pull
// requests, reviews, comments, issues and checks in memory, every REST
// request checked against GitHub's own OpenAPI description (trimmed by
// openapi/trim.py). forge/github's contract tests and the bot's end-to-end
// tests both run against it.
package githubtest

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

//go:embed openapi/github-trimmed.json
var description []byte

// Contract validates requests against GitHub's own OpenAPI description
// (trimmed by openapi/trim.py to the operations kptbot calls), so a fake
// GitHub server can refuse anything the real one would.
type Contract struct {
	router routers.Router
}

// LoadContract loads the description; it fails t when it cannot.
func LoadContract(t testing.TB) *Contract {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(description)
	if err != nil {
		t.Fatalf("loading GitHub OpenAPI description: %v", err)
	}
	// Match any host: requests go to httptest servers, not api.github.com.
	doc.Servers = openapi3.Servers{{URL: "/"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("routing GitHub OpenAPI description: %v", err)
	}
	return &Contract{router: router}
}

// Check validates one request (method, path, query, headers and JSON body)
// and names the operation and the failing part when it does not conform.
func (c *Contract) Check(req *http.Request) error {
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

// Middleware answers 422 with the reason to any request GitHub's
// description rejects, and records the failure on t.
func (c *Contract) Middleware(t testing.TB, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// GraphQL is outside the REST description; its handler checks it.
		if r.URL.Path == "/graphql" {
			next.ServeHTTP(w, r)
			return
		}
		if err := c.Check(r); err != nil {
			t.Errorf("request violates GitHub's OpenAPI description: %v", err)
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		next.ServeHTTP(w, r)
	})
}
