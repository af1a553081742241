package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/internal/gitfixture"
)

// TestV0IsARevision: a <pkg>/v0 tag is a published revision for pkg list,
// rpkg get and rpkg copy (latest and --revision 0), and a package's
// subpackages are not listed as packages.
func TestV0IsARevision(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bare := filepath.Join(dir, "blueprints.git")
	gitfixture.Git(t, dir, "init", "-q", "--bare", "-b", "main", bare)
	wt := gitfixture.WorkTree(t, bare)
	gitfixture.WriteFiles(t, wt, map[string]string{
		"basens/Kptfile":       "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: basens\n",
		"basens/quota/Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: quota\n",
	})
	gitfixture.CommitAndTag(t, wt, "first", "basens/v0")
	gitfixture.Git(t, wt, "push", "-q", "origin", "HEAD:main", "--tags")

	out, stderr, code := kptbot(t, "pkg", "list", "--repo", bare, "--check-upstream=false")
	if code != 0 {
		t.Fatalf("pkg list: %s", stderr)
	}
	if !strings.Contains(out, "basens   v0 ") || strings.Contains(out, "quota") {
		t.Errorf("pkg list:\n%s", out)
	}
	out, _, _ = kptbot(t, "rpkg", "get", "--repo", bare)
	if !containsRow(strings.Split(out, "\n"), []string{"blueprints.basens.v0", "basens", "v0", "0", "true", "Published", "blueprints"}) {
		t.Errorf("rpkg get:\n%s", out)
	}
	out, stderr, code = kptbot(t, "rpkg", "copy", "basens", "--repo", bare, "--workspace", "edit")
	if code != 0 || !strings.Contains(out, "basens/edit created from basens/v0") {
		t.Errorf("rpkg copy (latest): exit %d %s%s", code, out, stderr)
	}
	// With v1 published, --revision 0 still means v0.
	gitfixture.WriteFiles(t, wt, map[string]string{"basens/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"})
	gitfixture.CommitAndTag(t, wt, "second", "basens/v1")
	gitfixture.Git(t, wt, "push", "-q", "origin", "HEAD:main", "--tags")
	out, stderr, code = kptbot(t, "rpkg", "copy", "basens", "--repo", bare, "--workspace", "latest")
	if code != 0 || !strings.Contains(out, "basens/latest created from basens/v1") {
		t.Errorf("rpkg copy (latest): exit %d %s%s", code, out, stderr)
	}
	out, stderr, code = kptbot(t, "rpkg", "copy", "basens", "--repo", bare, "--workspace", "again", "--revision", "0")
	if code != 0 || !strings.Contains(out, "basens/again created from basens/v0") {
		t.Errorf("rpkg copy --revision 0: exit %d %s%s", code, out, stderr)
	}
}
