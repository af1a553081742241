package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kptbot/kptbot/internal/gitfixture"
)

// TestApprovePublishedTagNeverMoves is the attack on a published tag
// through `kptbot rpkg approve` against a remote served by git
// http-backend: while the approval runs, a concurrent publisher (another
// replica, a second approve, a person pushing tags) creates the tag the
// approval is about to take, at the registered branch's tip. The approval
// commit is a child of that tip, so the tag update is a fast-forward,
// which receive-pack accepts and go-git's push would send: the published
// revision would silently become a commit nobody approved. The tag must
// keep its commit, the approval fail naming the package and revision,
// nothing else move, and the next run publish the next revision.
func TestApprovePublishedTagNeverMoves(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// strike is the request on which the concurrent publisher strikes:
		// before the push's ref advertisement (the client-side check sees
		// the tag), or between the advertisement and the pack (only
		// receive-pack's own compare-and-swap can refuse).
		strike func(r *http.Request) bool
	}{
		{"tag created before the push reads the refs", func(r *http.Request) bool {
			return r.Method == http.MethodGet && r.URL.Query().Get("service") == "git-receive-pack"
		}},
		{"tag created after the push read the refs", func(r *http.Request) bool {
			return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			deploy := filepath.Join(root, "deploy.git")
			gitfixture.Git(t, root, "init", "-q", "--bare", "-b", "main", deploy)
			gitfixture.Git(t, deploy, "config", "http.receivepack", "true")
			wt := gitfixture.WorkTree(t, deploy)
			gitfixture.WriteFiles(t, wt, map[string]string{"README.md": "edge-1\n"})
			tip := gitfixture.CommitAndTag(t, wt, "initial", "")
			var armed atomic.Bool
			git := gitfixture.HTTPHandler(t, root)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.strike(r) && armed.CompareAndSwap(true, false) {
					gitfixture.Git(t, deploy, "tag", "team-a/v1", tip)
				}
				git.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			repo := []string{"--repo", srv.URL + "/deploy.git"}
			for _, args := range [][]string{{"rpkg", "init", "team-a", "--workspace", "w"}, {"rpkg", "propose", "team-a", "--workspace", "w"}} {
				if out, stderr, code := kptbot(t, append(args, repo...)...); code != 0 {
					t.Fatalf("kptbot %v: exit %d\n%s%s", args, code, out, stderr)
				}
			}
			proposal := gitfixture.Git(t, deploy, "rev-parse", "refs/heads/proposed/team-a/w")

			armed.Store(true)
			out, stderr, code := kptbot(t, append([]string{"rpkg", "approve", "team-a", "--workspace", "w"}, repo...)...)
			if armed.Load() {
				t.Fatal("the concurrent publisher never ran")
			}
			if code == 0 {
				t.Errorf("approve succeeded over a tag published concurrently: %s", out)
			} else if !strings.Contains(stderr, "team-a/w as team-a/v1") || !strings.Contains(stderr, "changed concurrently") {
				t.Errorf("approve's error does not name the package and revision as a conflict:\n%s", stderr)
			}
			if got := gitfixture.Git(t, deploy, "rev-parse", "refs/tags/team-a/v1"); got != tip {
				t.Fatalf("published tag team-a/v1 moved from %s to %s", tip, got)
			}
			if got := gitfixture.Git(t, deploy, "rev-parse", "refs/heads/main"); got != tip {
				t.Errorf("main moved to %s without its tag", got)
			}
			if got := gitfixture.Git(t, deploy, "rev-parse", "refs/heads/proposed/team-a/w"); got != proposal {
				t.Errorf("proposal moved to %s", got)
			}

			// The next run takes the next revision number.
			out, stderr, code = kptbot(t, append([]string{"rpkg", "approve", "team-a", "--workspace", "w"}, repo...)...)
			if code != 0 || !strings.Contains(out, "published as team-a/v2") {
				t.Fatalf("second approve: exit %d\n%s%s", code, out, stderr)
			}
			if got := gitfixture.Git(t, deploy, "rev-parse", "refs/tags/team-a/v1"); got != tip {
				t.Errorf("published tag team-a/v1 moved to %s", got)
			}
			if v2, main := gitfixture.Git(t, deploy, "rev-parse", "refs/tags/team-a/v2"), gitfixture.Git(t, deploy, "rev-parse", "refs/heads/main"); v2 != main {
				t.Errorf("team-a/v2 at %s, main at %s", v2, main)
			}
			gitfixture.Git(t, deploy, "fsck", "--strict")
		})
	}
}

// TestApproveHonoursGitRefLocks: `kptbot rpkg approve` on a repository on
// this machine, while a git process (a person's push arriving over ssh)
// is writing the tag the approval is about to take, holding git's
// refs/tags/<pkg>/v1.lock. git would finish by renaming its value over
// whatever kptbot wrote, so the approval must refuse, change nothing, and
// succeed once the lock is gone.
func TestApproveHonoursGitRefLocks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	deploy := filepath.Join(root, "deploy.git")
	gitfixture.Git(t, root, "init", "-q", "--bare", "-b", "main", deploy)
	wt := gitfixture.WorkTree(t, deploy)
	gitfixture.WriteFiles(t, wt, map[string]string{"README.md": "edge-1\n"})
	tip := gitfixture.CommitAndTag(t, wt, "initial", "")
	repo := []string{"--repo", deploy}
	for _, args := range [][]string{{"rpkg", "init", "team-a", "--workspace", "w"}, {"rpkg", "propose", "team-a", "--workspace", "w"}} {
		if out, stderr, code := kptbot(t, append(args, repo...)...); code != 0 {
			t.Fatalf("kptbot %v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	lock := filepath.Join(deploy, "refs", "tags", "team-a", "v1.lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, []byte(tip+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	approve := append([]string{"rpkg", "approve", "team-a", "--workspace", "w"}, repo...)
	out, stderr, code := kptbot(t, approve...)
	if code == 0 || !strings.Contains(stderr, "refs/tags/team-a/v1 is being written by another git process") {
		t.Errorf("approve while git holds the tag's lock: exit %d\n%s%s", code, out, stderr)
	}
	if tags := gitfixture.Git(t, deploy, "tag", "-l"); tags != "" {
		t.Errorf("tags after the refused approval: %s", tags)
	}
	if got := gitfixture.Git(t, deploy, "rev-parse", "refs/heads/main"); got != tip {
		t.Errorf("main moved to %s", got)
	}
	gitfixture.Git(t, deploy, "rev-parse", "refs/heads/proposed/team-a/w")
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := kptbot(t, approve...); code != 0 || !strings.Contains(out, "published as team-a/v1") {
		t.Fatalf("approve after the lock is gone: exit %d\n%s%s", code, out, stderr)
	}
	gitfixture.Git(t, deploy, "fsck", "--strict")
}
