package githubtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

// TestRenameRedirectsUntilTaken: a renamed repository keeps its id; its
// old name answers REST with GitHub's 301 (307 for a write) to
// /repositories/{id}/..., which serves the renamed repository, and git
// with a redirect to the new name, until a new repository is created
// under the old name and gets an id of its own.
func TestRenameRedirectsUntilTaken(t *testing.T) {
	f := New(t)
	old := forge.Repo{FullName: "acme/blueprints"}
	sha := f.Seed(old, "main", map[string][]byte{"a.txt": []byte("a\n")})
	id := f.RepoID(old)
	if id == 0 {
		t.Fatal("a seeded repository has no id")
	}
	f.Rename(old, "acme/renamed")
	if got := f.RepoID(forge.Repo{FullName: "acme/renamed"}); got != id {
		t.Fatalf("renamed repository's id %d, want %d", got, id)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for method, want := range map[string]int{"GET": http.StatusMovedPermanently, "POST": http.StatusTemporaryRedirect} {
		path, body := "/repos/acme/blueprints/tags", ""
		if method == "POST" {
			path, body = "/repos/acme/blueprints/git/refs", `{"ref":"refs/tags/x","sha":"`+sha+`"}`
		}
		req, _ := http.NewRequest(method, f.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != want || !strings.HasPrefix(loc, f.URL+"/repositories/") {
			t.Errorf("%s %s on the old name: HTTP %d to %q, want %d to /repositories/%d/...", method, path, resp.StatusCode, loc, want, id)
		}
	}
	repoName := func() (string, int64) {
		t.Helper()
		resp, err := http.Get(f.URL + "/repos/acme/blueprints")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			ID       int64  `json:"id"`
			FullName string `json:"full_name"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			t.Fatal(err)
		}
		return r.FullName, r.ID
	}
	if name, got := repoName(); name != "acme/renamed" || got != id {
		t.Errorf("the old name, redirect followed, is %s (id %d), want acme/renamed (id %d)", name, got, id)
	}
	if out := gitfixture.Git(t, t.TempDir(), "ls-remote", f.GitURL+"acme/blueprints.git", "refs/heads/main"); !strings.Contains(out, sha+"\trefs/heads/main") {
		t.Errorf("git ls-remote on the old name: %q, want the renamed repository's main %s", out, sha)
	}

	f.Seed(old, "main", map[string][]byte{"b.txt": []byte("b\n")})
	if name, got := repoName(); name != "acme/blueprints" || got == id || got == 0 {
		t.Errorf("after a new repository took the name: %s (id %d), want acme/blueprints with a new id (not %d)", name, got, id)
	}
	if out := gitfixture.Git(t, t.TempDir(), "ls-remote", f.GitURL+"acme/blueprints.git", "refs/heads/main"); strings.Contains(out, sha) {
		t.Errorf("git on the old name still reaches the renamed repository: %q", out)
	}
}
