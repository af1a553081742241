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

func TestForgeCommandsGitLab(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Private-Token") != "glpat-cli" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"401 Unauthorized"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.EscapedPath() {
		case "/gitlab/api/v4/projects":
			if r.URL.Query().Get("membership") != "true" {
				t.Errorf("projects listed without membership=true: %s", r.URL.RawQuery)
			}
			fmt.Fprint(w, `[{"id":7,"path_with_namespace":"acme/infra/site-b","default_branch":"main","visibility":"private",
				"http_url_to_repo":"https://gitlab.example/acme/infra/site-b.git","topics":["kptbot"]}]`)
		case "/gitlab/api/v4/projects/acme%2Finfra%2Fsite-b/repository/tags":
			fmt.Fprint(w, `[{"name":"basens/v1","target":"3333333333333333333333333333333333333333","commit":{"id":"2222222222222222222222222222222222222222"}}]`)
		case "/gitlab/api/v4/projects/acme%2Finfra%2Fsite-b/repository/branches":
			fmt.Fprint(w, `[{"name":"main","commit":{"id":"1111111111111111111111111111111111111111"}}]`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"404 Project Not Found"}`)
		}
	}))
	t.Cleanup(srv.Close)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("glpat-cli\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := srv.URL + "/gitlab/api/v4"
	out, stderr, code := kptbot(t, "forge", "repos", "--forge", "gitlab", "--gitlab-url", url, "--token-file", tok)
	if code != 0 || !strings.Contains(out, "acme/infra/site-b") || !strings.Contains(out, "true") {
		t.Errorf("forge repos: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = kptbot(t, "forge", "refs", "acme/infra/site-b", "--forge", "gitlab", "--gitlab-url", url, "--token-file", tok, "-o", "json")
	if code != 0 || !strings.Contains(out, `"basens/v1"`) || !strings.Contains(out, `"2222222222222222222222222222222222222222"`) {
		t.Errorf("forge refs: exit %d\n%s%s", code, out, stderr)
	}
	_, stderr, code = kptbot(t, "forge", "refs", "acme/missing", "--forge", "gitlab", "--gitlab-url", url, "--token-file", tok)
	if code == 0 || !strings.Contains(stderr, "not found") {
		t.Errorf("forge refs on a missing project: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = kptbot(t, "forge", "repos", "--forge", "gitlab", "--gitlab-url", url, "--token-env", "KPTBOT_TEST_UNSET_TOKEN")
	if code == 0 || !strings.Contains(stderr, "KPTBOT_TEST_UNSET_TOKEN") {
		t.Errorf("no credentials: exit %d, stderr %q", code, stderr)
	}
	if os.Getenv("GITLAB_TOKEN") == "" {
		_, stderr, code = kptbot(t, "forge", "repos", "--forge", "gitlab", "--gitlab-url", url)
		if code == 0 || !strings.Contains(stderr, "GITLAB_TOKEN") {
			t.Errorf("--forge gitlab reads GITLAB_TOKEN by default: exit %d, stderr %q", code, stderr)
		}
	}
	_, stderr, code = kptbot(t, "forge", "repos", "--forge", "gitlab", "--app-id", "1")
	if code == 0 || !strings.Contains(stderr, "GitHub flags") {
		t.Errorf("GitHub App flags with --forge gitlab: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = kptbot(t, "forge", "repos", "--forge", "bitbucket")
	if code == 0 || !strings.Contains(stderr, "want github or gitlab") {
		t.Errorf("unknown forge: exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(stderr, "glpat-cli") {
		t.Error("token printed")
	}
}
