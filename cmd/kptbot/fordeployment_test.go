package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/internal/gitfixture"
)

// TestForDeploymentContexts: pkg get --for-deployment gives the root
// package a package-context.yaml named after the directory and removes
// the subpackages' package contexts, as kpt v1.0.0-beta.67 does.
func TestForDeploymentContexts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bare := filepath.Join(dir, "up.git")
	gitfixture.Git(t, dir, "init", "-q", "--bare", "-b", "main", bare)
	up := gitfixture.WorkTree(t, bare)
	ctx := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  name: example\n"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings # kept as written\ndata:\n  a: \"1\"\n"
	gitfixture.WriteFiles(t, up, map[string]string{
		"app/Kptfile":                 "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n",
		"app/package-context.yaml":    ctx,
		"app/cm.yaml":                 cm,
		"app/db/Kptfile":              "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: db\n",
		"app/db/package-context.yaml": ctx,
		"app/db/mixed.yaml":           cm + "---\n" + ctx,
	})
	gitfixture.CommitAndTag(t, up, "v1", "app/v1")
	ws := t.TempDir()
	pkg := filepath.Join(ws, "team-a")
	if _, stderr, code := kptbot(t, "pkg", "get", bare+"/app@v1", pkg, "--for-deployment"); code != 0 {
		t.Fatalf("get: %s", stderr)
	}
	read := func(p string) string {
		b, _ := os.ReadFile(filepath.Join(pkg, p))
		return string(b)
	}
	if got, want := read("package-context.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  name: team-a\n"; got != want {
		t.Errorf("root package-context.yaml:\n%s\nwant\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(pkg, "db", "package-context.yaml")); !os.IsNotExist(err) {
		t.Errorf("the subpackage's package context was kept: %v", err)
	}
	if got := read("db/mixed.yaml"); got != read("cm.yaml") {
		t.Errorf("db/mixed.yaml should hold only the settings ConfigMap:\n%s\nwant\n%s", got, read("cm.yaml"))
	}
}

// TestGetAttributionMatchesKpt: Config Connector resources get kpt's
// cnrm.cloud.google.com/blueprint attribution on pkg get, byte for byte as
// the kpt CLI writes them, other resources none.
func TestGetAttributionMatchesKpt(t *testing.T) {
	t.Parallel()
	kpt, err := exec.LookPath("kpt")
	if err != nil {
		t.Skip("kpt CLI not installed")
	}
	dir := t.TempDir()
	bare := filepath.Join(dir, "up.git")
	gitfixture.Git(t, dir, "init", "-q", "--bare", "-b", "main", bare)
	up := gitfixture.WorkTree(t, bare)
	gitfixture.WriteFiles(t, up, map[string]string{
		"infra/Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: infra\n",
		"infra/bucket.yaml": "apiVersion: storage.cnrm.cloud.google.com/v1beta1\nkind: StorageBucket\nmetadata:\n  name: logs\n" +
			"---\napiVersion: iam.cnrm.cloud.google.com/v1beta1\nkind: IAMPolicyMember\nmetadata:\n  name: writer\nspec:\n  member: user:a@example.com\n" +
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
	})
	gitfixture.CommitAndTag(t, up, "v1", "infra/v1")
	ours, theirs := filepath.Join(t.TempDir(), "infra"), filepath.Join(t.TempDir(), "infra")
	if _, stderr, code := kptbot(t, "pkg", "get", bare+"/infra@v1", ours); code != 0 {
		t.Fatalf("kptbot pkg get: %s", stderr)
	}
	if out, err := exec.Command(kpt, "pkg", "get", bare+"/infra@v1", theirs).CombinedOutput(); err != nil {
		t.Fatalf("kpt pkg get: %v\n%s", err, out)
	}
	a, _ := os.ReadFile(filepath.Join(ours, "bucket.yaml"))
	b, _ := os.ReadFile(filepath.Join(theirs, "bucket.yaml"))
	// kpt renamed its attribution from kpt-<group> to krm-<group> after
	// v1.0.0-beta.56; kptbot writes v1.0.0-beta.67's (recordAction's table
	// test covers merging with an existing value).
	b = []byte(strings.ReplaceAll(string(b), "blueprint: 'kpt-pkg'", "blueprint: 'krm-pkg'"))
	if string(a) != string(b) || strings.Count(string(a), "blueprint: 'krm-pkg'") != 2 {
		t.Errorf("bucket.yaml differs from kpt's:\nkptbot:\n%s\nkpt:\n%s", a, b)
	}
}
