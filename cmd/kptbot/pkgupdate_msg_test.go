package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/internal/gitfixture"
)

// TestUpdateMessages: pkg update names the package by its directory and
// prints a conflict on a list as YAML blocks.
func TestUpdateMessages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bare := filepath.Join(dir, "up.git")
	gitfixture.Git(t, dir, "init", "-q", "--bare", "-b", "main", bare)
	up := gitfixture.WorkTree(t, bare)
	deploy := func(args string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          image: app:1\n          args:\n" + args
	}
	gitfixture.WriteFiles(t, up, map[string]string{
		"app/Kptfile":     "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n",
		"app/deploy.yaml": deploy("            - serve\n"),
	})
	gitfixture.CommitAndTag(t, up, "v1", "app/v1")
	gitfixture.WriteFiles(t, up, map[string]string{"app/deploy.yaml": deploy("            - serve\n            - --upstream\n")})
	gitfixture.CommitAndTag(t, up, "v2", "app/v2")

	ws := t.TempDir()
	gitfixture.Git(t, ws, "init", "-q")
	pkg := filepath.Join(ws, "team-a")
	if _, stderr, code := kptbot(t, "pkg", "get", bare+"/app@v1", pkg); code != 0 {
		t.Fatalf("get: %s", stderr)
	}
	f := filepath.Join(pkg, "deploy.yaml")
	b, _ := os.ReadFile(f)
	if err := os.WriteFile(f, []byte(strings.Replace(string(b), "- serve\n", "- serve\n            - --local\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	gitfixture.Git(t, ws, "add", "-A")
	gitfixture.Git(t, ws, "commit", "-q", "-m", "get and edit")
	out, stderr, code := kptbot(t, "pkg", "update", pkg+"@v2")
	if code != 0 {
		t.Fatalf("update: %s", stderr)
	}
	if !strings.Contains(out, `Updated package "team-a" from `) {
		t.Errorf("update does not name the package by its directory:\n%s", out)
	}
	want := "spec.template.spec.containers[name=app].args (upstream kept):\n" +
		"    local:\n      - serve\n      - --local\n    upstream:\n      - serve\n      - --upstream\n"
	if !strings.Contains(out, want) {
		t.Errorf("list conflict not printed as YAML blocks:\n%s", out)
	}
}
