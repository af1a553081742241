package gitrepo

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

// TestPushFilesOverHTTP pushes through git http-backend and checks the
// compare-and-swap: a human's commit on the branch is never overwritten.
func TestPushFilesOverHTTP(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	bare := filepath.Join(root, "site.git")
	gitfixture.Git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	gitfixture.Git(t, bare, "config", "http.receivepack", "true")
	wt := gitfixture.WorkTree(t, bare)
	gitfixture.Git(t, wt, "symbolic-ref", "HEAD", "refs/heads/main")
	gitfixture.WriteFiles(t, wt, map[string]string{
		"sites/a/Kptfile": "kind: Kptfile\n", "sites/a/cm.yaml": "a: 1\n", "sites/b/old.yaml": "b: 1\n", "README.md": "hi\n",
	})
	base := gitfixture.CommitAndTag(t, wt, "init", "basens/v1")
	srv := gitfixture.HTTPServer(t, root)
	url := srv.URL + "/site.git"
	ctx := context.Background()

	first, err := PushFiles(ctx, Push{URL: url, Branch: "kptbot/update", Base: "basens/v1", Message: "update",
		Files: map[string][]byte{"sites/a/cm.yaml": []byte("a: 2\n"), "sites/b/old.yaml": nil, "sites/c/new.yaml": []byte("c: 1\n")}})
	if err != nil {
		t.Fatalf("creating the branch: %v", err)
	}
	gitfixture.Git(t, wt, "fetch", "-q", "origin")
	if got := strings.TrimSpace(gitfixture.Git(t, wt, "rev-parse", "origin/kptbot/update")); got != first {
		t.Fatalf("remote branch at %s, want %s", got, first)
	}
	files := gitfixture.Git(t, wt, "ls-tree", "-r", "--name-only", first)
	if want := "README.md\nsites/a/Kptfile\nsites/a/cm.yaml\nsites/c/new.yaml"; files != want {
		t.Errorf("files at the pushed commit:\n%s\nwant:\n%s\n(sites/b must be gone: its only file was deleted)", files, want)
	}
	if got := gitfixture.Git(t, wt, "show", first+":sites/a/cm.yaml"); got != "a: 2" {
		t.Errorf("cm.yaml = %q", got)
	}
	if parent := gitfixture.Git(t, wt, "rev-parse", first+"^"); parent != base {
		t.Errorf("parent %s, want the base %s", parent, base)
	}

	if _, err := PushFiles(ctx, Push{URL: url, Branch: "kptbot/update", Base: "main", Files: map[string][]byte{"x": []byte("x")}}); !errors.Is(err, forge.ErrConflict) {
		t.Errorf("creating an existing branch: error = %v, want ErrConflict", err)
	}

	// A human pushes on the bot's branch; the bot's next push, still
	// expecting its own commit, must be refused and the human's kept.
	gitfixture.Git(t, wt, "checkout", "-q", "-b", "kptbot/update", "origin/kptbot/update")
	gitfixture.WriteFiles(t, wt, map[string]string{"sites/a/cm.yaml": "a: human\n"})
	human := gitfixture.CommitAndTag(t, wt, "human fix", "")
	_, err = PushFiles(ctx, Push{URL: url, Branch: "kptbot/update", OldSHA: first, Base: "main", Files: map[string][]byte{"sites/a/cm.yaml": []byte("a: 3\n")}})
	if !errors.Is(err, forge.ErrConflict) {
		t.Fatalf("push over a human's commit: error = %v, want ErrConflict", err)
	}
	gitfixture.Git(t, wt, "fetch", "-q", "origin")
	if got := strings.TrimSpace(gitfixture.Git(t, wt, "rev-parse", "origin/kptbot/update")); got != human {
		t.Fatalf("branch at %s after the refused push, want the human's %s", got, human)
	}

	// Expecting the human's commit, the bot may rebase onto main.
	rebased, err := PushFiles(ctx, Push{URL: url, Branch: "kptbot/update", OldSHA: human, Base: "main", Files: map[string][]byte{"sites/a/cm.yaml": []byte("a: 3\n")}})
	if err != nil {
		t.Fatalf("push with the current old SHA: %v", err)
	}
	gitfixture.Git(t, wt, "fetch", "-q", "origin")
	if got := strings.TrimSpace(gitfixture.Git(t, wt, "rev-parse", "origin/kptbot/update")); got != rebased {
		t.Errorf("branch at %s, want %s", got, rebased)
	}

	for _, bad := range []Push{
		{URL: url, Branch: "x", Base: "no-such-ref", Files: nil},
		{URL: url, Branch: "y", Base: "main", Files: map[string][]byte{"../escape": []byte("x")}},
		{URL: url, Branch: "", Base: "main"},
	} {
		if _, err := PushFiles(ctx, bad); err == nil {
			t.Errorf("PushFiles(branch %q, base %q, files %v) succeeded, want an error", bad.Branch, bad.Base, bad.Files)
		}
	}
}
