package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestForgeCommands(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ghp_cli" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"Bad credentials"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/installation/repositories":
			fmt.Fprint(w, `{"total_count":1,"repositories":[{"full_name":"acme/site-a","default_branch":"main","private":true}]}`)
		case "/repos/acme/site-a/tags":
			fmt.Fprint(w, `[{"name":"basens/v1","commit":{"sha":"2222222222222222222222222222222222222222"}}]`)
		case "/repos/acme/site-a/branches":
			fmt.Fprint(w, `[{"name":"main","commit":{"sha":"1111111111111111111111111111111111111111"}}]`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
		}
	}))
	t.Cleanup(srv.Close)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("ghp_cli\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := kptbot(t, "forge", "repos", "--github-url", srv.URL, "--token-file", tok)
	if code != 0 || !strings.Contains(out, "acme/site-a") || !strings.Contains(out, "true") {
		t.Errorf("forge repos: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = kptbot(t, "forge", "refs", "acme/site-a", "--github-url", srv.URL, "--token-file", tok, "-o", "json")
	if code != 0 || !strings.Contains(out, `"basens/v1"`) || !strings.Contains(out, `"1111111111111111111111111111111111111111"`) {
		t.Errorf("forge refs: exit %d\n%s%s", code, out, stderr)
	}
	_, stderr, code = kptbot(t, "forge", "refs", "acme/missing", "--github-url", srv.URL, "--token-file", tok)
	if code == 0 || !strings.Contains(stderr, "not found") {
		t.Errorf("forge refs on a missing repo: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = kptbot(t, "forge", "repos", "--github-url", srv.URL, "--token-env", "KPTBOT_TEST_UNSET_TOKEN")
	if code == 0 || !strings.Contains(stderr, "KPTBOT_TEST_UNSET_TOKEN") {
		t.Errorf("no credentials: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = kptbot(t, "forge", "repos", "--app-id", "1")
	if code == 0 || !strings.Contains(stderr, "go together") {
		t.Errorf("partial App flags: exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(stderr, "ghp_cli") {
		t.Error("token printed")
	}
}
