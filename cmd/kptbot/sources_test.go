package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/fetch/archive"
	"github.com/kptbot/kptbot/internal/gitfixture"
	"github.com/kptbot/kptbot/internal/ocitest"
)

// writePackage writes version n of the basens test package into a new
// directory and returns it.
func writePackage(t *testing.T, n string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "basens")
	gitfixture.WriteFiles(t, dir, map[string]string{
		"Kptfile":        ocitest.Kptfile("basens"),
		"namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n",
		"config.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  version: \"" + n + "\"\n",
	})
	return dir
}

var digestLine = regexp.MustCompile(`^sha256:[0-9a-f]{64}\n$`)

func push(t *testing.T, ref, dir string) string {
	t.Helper()
	out, stderr, code := kptbot(t, "pkg", "push", ref, dir)
	if code != 0 || !digestLine.MatchString(out) {
		t.Fatalf("pkg push %s: exit %d, stdout %q, stderr %s", ref, code, out, stderr)
	}
	return strings.TrimSpace(out)
}

func lockDigest(t *testing.T, dir string) string {
	t.Helper()
	kf, err := kptpkg.ReadKptfile(dir)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := kptpkg.LockOf(kf)
	if err != nil || lock == nil {
		t.Fatalf("lock of %s: %+v, %v", dir, lock, err)
	}
	return lock.Commit
}

// TestOCIRoundTripRealRegistry is the round trip against a real
// registry (the distribution registry from Debian's docker-registry):
// push v1 and v2, get v1, edit, update to v2 keeping the edit, the lock
// equal to the pushed digest each time.
func TestOCIRoundTripRealRegistry(t *testing.T) {
	t.Parallel()
	host := ocitest.RealRegistry(t)
	repo := "oci://" + host + "/blueprints"
	d1 := push(t, repo+"//basens:v1", writePackage(t, "1"))
	d2 := push(t, repo+"//basens:v2", writePackage(t, "2"))
	if d1 == d2 {
		t.Fatal("v1 and v2 have the same digest")
	}

	out, stderr, code := kptbot(t, "pkg", "list", "--repo", repo)
	if code != 0 {
		t.Fatalf("pkg list: exit %d: %s", code, stderr)
	}
	for _, want := range []string{`basens\s+v1\s+v1\s+Published\s+` + d1, `basens\s+v2 \(latest\)\s+v2\s+Published\s+` + d2} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("pkg list output does not match %s:\n%s", want, out)
		}
	}

	ws := t.TempDir()
	gitfixture.Git(t, ws, "init", "-q")
	pkg := filepath.Join(ws, "team-a")
	out, stderr, code = kptbot(t, "pkg", "get", repo+"//basens:v1", pkg)
	if code != 0 || !strings.Contains(out, "Fetched "+repo+"//basens at v1 ("+d1+")") {
		t.Fatalf("pkg get: exit %d\n%s%s", code, out, stderr)
	}
	if got := lockDigest(t, pkg); got != d1 {
		t.Fatalf("lock after get = %s, want the pushed digest %s", got, d1)
	}
	ns := filepath.Join(pkg, "namespace.yaml")
	b, _ := os.ReadFile(ns)
	if err := os.WriteFile(ns, []byte(strings.Replace(string(b), "  name: example\n", "  name: example\n  labels:\n    team: a\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	gitfixture.Git(t, ws, "add", "-A")
	gitfixture.Git(t, ws, "commit", "-q", "-m", "get and edit")

	out, stderr, code = kptbot(t, "pkg", "update", pkg+"@v2")
	if code != 0 || !strings.Contains(out, "at v2 ("+d2+")") || !strings.Contains(out, "modified config.yaml") {
		t.Fatalf("pkg update: exit %d\n%s%s", code, out, stderr)
	}
	if got := lockDigest(t, pkg); got != d2 {
		t.Fatalf("lock after update = %s, want the pushed digest %s", got, d2)
	}
	nsAfter, _ := os.ReadFile(ns)
	cfg, _ := os.ReadFile(filepath.Join(pkg, "config.yaml"))
	if !strings.Contains(string(nsAfter), "team: a") || !strings.Contains(string(cfg), `version: "2"`) {
		t.Fatalf("after update: namespace.yaml\n%s\nconfig.yaml\n%s", nsAfter, cfg)
	}
	gitfixture.Git(t, ws, "commit", "-q", "-am", "update")
	out, _, code = kptbot(t, "pkg", "diff", pkg)
	if code != 0 || !strings.Contains(out, "+    team: a") {
		t.Fatalf("pkg diff: exit %d\n%s", code, out)
	}

	// A published tag does not move.
	_, stderr, code = kptbot(t, "pkg", "push", repo+"//basens:v1", writePackage(t, "3"))
	if code == 0 || !strings.Contains(stderr, "should not move") {
		t.Fatalf("moving v1: exit %d, %s", code, stderr)
	}
}

func TestPushAndGetErrors(t *testing.T) {
	t.Parallel()
	host := ocitest.MemRegistry(t)
	notPkg := t.TempDir()
	gitfixture.WriteFiles(t, notPkg, map[string]string{"cm.yaml": "kind: ConfigMap\n"})
	v1 := ocitest.TarGz(t, ocitest.Files(map[string]string{"Kptfile": ocitest.Kptfile("bp"), "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"})...)
	srv := ocitest.NewArchiveServer(t, map[string][]byte{"/bp.tgz": v1})
	pin := strings.TrimPrefix(archive.Digest(v1), "sha256:")
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"pkg", "push", "oci://" + host + "/bp//basens", writePackage(t, "1")}, "a tag is required"},
		{[]string{"pkg", "push", "oci://" + host + "/bp//basens:v1", notPkg}, "has no Kptfile"},
		{[]string{"pkg", "push", "oci://" + host + "/Bp:v1", writePackage(t, "1")}, "lower-case"},
		{[]string{"pkg", "get", srv.URL + "/bp.tgz#sha256=" + strings.Repeat("a", 64), filepath.Join(t.TempDir(), "x")}, "digest mismatch"},
		{[]string{"pkg", "get", "oci://127.0.0.1:1/bp//basens:v1", filepath.Join(t.TempDir(), "x")}, "registry 127.0.0.1:1"},
		{[]string{"pkg", "get", "oci://" + host + "/bp//basens:v1", filepath.Join(t.TempDir(), "x")}, "no package there"},
		{[]string{"pkg", "list", "--repo", "oci://" + host + "/bp:v1"}, "without a tag"},
	}
	for _, tc := range tests {
		_, stderr, code := kptbot(t, tc.args...)
		if code == 0 || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.msg)
		}
	}
	dest := filepath.Join(t.TempDir(), "bp")
	out, stderr, code := kptbot(t, "pkg", "get", srv.URL+"/bp.tgz#sha256="+pin, dest)
	if code != 0 || !strings.Contains(out, "at "+archive.Digest(v1)) {
		t.Fatalf("pinned get: exit %d\n%s%s", code, out, stderr)
	}
}

// TestRpkgFromOCI: a draft cloned from an OCI package records Porch's
// clone task (upstreamRef.oci.image, pinned by digest) and upgrades from
// the registry.
func TestRpkgFromOCI(t *testing.T) {
	t.Parallel()
	host := ocitest.MemRegistry(t)
	repo := "oci://" + host + "/blueprints"
	d1 := push(t, repo+"//basens:v1", writePackage(t, "1"))
	root := t.TempDir()
	deploy := filepath.Join(root, "deploy.git")
	gitfixture.Git(t, root, "init", "-q", "--bare", "-b", "main", deploy)
	wt := gitfixture.WorkTree(t, deploy)
	gitfixture.WriteFiles(t, wt, map[string]string{"README.md": "edge-1\n"})
	gitfixture.CommitAndTag(t, wt, "initial", "")

	out, stderr, code := kptbot(t, "rpkg", "clone", repo+"//basens:v1", "team-a", "--workspace", "w", "--repo", deploy)
	if code != 0 || !strings.Contains(out, "cloned from "+repo+"//basens at v1 ("+d1+")") {
		t.Fatalf("rpkg clone: exit %d\n%s%s", code, out, stderr)
	}
	msg := gitfixture.Git(t, deploy, "log", "-1", "--format=%B", "drafts/team-a/w")
	if want := `"upstreamRef":{"type":"oci","oci":{"image":"` + host + `/blueprints/basens@` + d1 + `"}}`; !strings.Contains(msg, want) {
		t.Fatalf("clone trailer lacks %s:\n%s", want, msg)
	}
	d2 := push(t, repo+"//basens:v2", writePackage(t, "2"))
	out, stderr, code = kptbot(t, "rpkg", "upgrade", "team-a", "--workspace", "w", "--to", "v2", "--repo", deploy)
	if code != 0 || !strings.Contains(out, "upgraded to v2") {
		t.Fatalf("rpkg upgrade: exit %d\n%s%s", code, out, stderr)
	}
	kf := gitfixture.Git(t, deploy, "show", "drafts/team-a/w:team-a/Kptfile")
	if !strings.Contains(kf, "kptbot.dev/upstream-lock-resource-version: "+d2) {
		t.Fatalf("upgraded draft Kptfile:\n%s", kf)
	}
}
