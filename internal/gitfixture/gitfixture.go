// Package gitfixture builds real git repositories for tests with the git
// binary (kptbot itself uses go-git only) and serves them over HTTP with
// git http-backend, the way a real git server does.
package gitfixture

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// RequireGit skips the test when no git binary is available.
func RequireGit(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git binary not found; fixture repositories need it")
	}
	return p
}

// Git runs git in dir with a fixed identity and dates, failing the test on
// error, and returns its trimmed output.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	RequireGit(t)
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=kptbot-test", "GIT_AUTHOR_EMAIL=test@kptbot.dev",
		"GIT_COMMITTER_NAME=kptbot-test", "GIT_COMMITTER_EMAIL=test@kptbot.dev",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Root returns the project's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Blueprints clones the Porch test-blueprints bundle (tags basens/v1..v4,
// update/v1..v2, bucket/v1, ...) into a new bare repository named
// blueprints.git under a temp dir and returns its path.
func Blueprints(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	bare := filepath.Join(dir, "blueprints.git")
	Git(t, dir, "clone", "-q", "--bare", filepath.Join(Root(), "testdata", "test-blueprints.bundle"), bare)
	return bare
}

// WorkTree clones bare into a new work tree (for committing new upstream
// versions) and returns its path.
func WorkTree(t testing.TB, bare string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "wt")
	Git(t, filepath.Dir(dir), "clone", "-q", bare, dir)
	return dir
}

// WriteFiles writes files (slash paths) under dir.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// CommitAndTag commits everything in the work tree wt, tags it (if tag is
// not empty) and pushes branch and tags to origin.
func CommitAndTag(t testing.TB, wt, msg, tag string) string {
	t.Helper()
	Git(t, wt, "add", "-A")
	Git(t, wt, "commit", "-q", "-m", msg)
	if tag != "" {
		Git(t, wt, "tag", tag)
	}
	Git(t, wt, "push", "-q", "origin", "HEAD", "--tags")
	return Git(t, wt, "rev-parse", "HEAD")
}

// HTTPServer serves the bare repositories under root over git's smart HTTP
// protocol with git http-backend; repository URLs are srv.URL + "/" + name.
func HTTPServer(t testing.TB, root string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(HTTPHandler(t, root))
	t.Cleanup(srv.Close)
	return srv
}

// HTTPHandler is HTTPServer's git http-backend handler, for a fake forge
// that checks credentials before git sees the request.
func HTTPHandler(t testing.TB, root string) http.Handler {
	t.Helper()
	RequireGit(t)
	execPath := strings.TrimSpace(mustOutput(t, "git", "--exec-path"))
	return &cgi.Handler{
		Path: filepath.Join(execPath, "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
}

func mustOutput(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}
