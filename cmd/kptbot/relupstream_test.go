package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

// TestRelativeUpstreamIsRecordedAbsolute: pkg get from a repository named
// by a relative path records its absolute path, so an update run from any
// other directory (kptbot's, or kpt's) still finds it.
func TestRelativeUpstreamIsRecordedAbsolute(t *testing.T) {
	t.Parallel()
	bare := gitfixture.Blueprints(t)
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(cwd, bare)
	if err != nil || !strings.HasPrefix(rel, "..") {
		t.Skipf("no relative path from %s to %s", cwd, bare)
	}
	ws := t.TempDir()
	gitfixture.Git(t, ws, "init", "-q")
	pkg := filepath.Join(ws, "ns")
	if _, stderr, code := kptbot(t, "pkg", "get", rel+"/basens@v1", pkg); code != 0 {
		t.Fatalf("pkg get %s: %s", rel, stderr)
	}
	kf, err := kptpkg.ReadKptfile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSuffix(bare, ".git")
	if kf.Upstream.Git.Repo != want || kf.UpstreamLock.Git.Repo != want {
		t.Fatalf("upstream repo %q, lock %q; want the absolute %q", kf.Upstream.Git.Repo, kf.UpstreamLock.Git.Repo, want)
	}
	gitfixture.Git(t, ws, "add", "-A")
	gitfixture.Git(t, ws, "commit", "-q", "-m", "get")
	if _, stderr, code := kptbot(t, "pkg", "update", pkg+"@v2"); code != 0 {
		t.Fatalf("pkg update: %s", stderr)
	}
	gitfixture.Git(t, ws, "commit", "-q", "-am", "update")
	kpt, err := exec.LookPath("kpt")
	if err != nil {
		return
	}
	// kpt, run from another directory than get was (kpt needs the
	// package below its working directory), follows the same record.
	cmd := exec.Command(kpt, "pkg", "update", "ns@v3")
	cmd.Dir = ws
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("kpt pkg update from another directory: %v\n%s", err, out)
	}
}
