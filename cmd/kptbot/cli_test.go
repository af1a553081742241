package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/gitfixture"
	"github.com/kptbot/kptbot/porch"
)

// kptbot runs the CLI in-process. Tests pass absolute paths, so they can
// run in parallel without changing the working directory.
func kptbot(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// TestQuickstart is the README's done-criterion: get a package from a local
// git repo, edit it, update it to a newer tag keeping the edit, diff it and
// render it with built-in functions, without Docker.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	bare := gitfixture.Blueprints(t)
	ws := t.TempDir()
	gitfixture.Git(t, ws, "init", "-q")
	pkg := filepath.Join(ws, "team-a")

	out, stderr, code := kptbot(t, "pkg", "get", "file://"+bare+"/basens@v2", pkg)
	if code != 0 {
		t.Fatalf("pkg get: exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, "basens/v2") {
		t.Errorf("pkg get output does not name the resolved tag:\n%s", out)
	}
	gitfixture.Git(t, ws, "add", "-A")
	gitfixture.Git(t, ws, "commit", "-q", "-m", "get")

	// A local edit, not committed: update refuses, naming the file.
	rq := filepath.Join(pkg, "resourcequota.yaml")
	b, _ := os.ReadFile(rq)
	edited := strings.Replace(string(b), "memory: 40G", "memory: 64G", 1)
	edited = strings.Replace(edited, "  hard:\n", "  hard:\n    pods: \"20\"\n", 1)
	if err := os.WriteFile(rq, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = kptbot(t, "pkg", "update", pkg+"@v4")
	if code == 0 || !strings.Contains(stderr, "uncommitted changes") || !strings.Contains(stderr, "team-a/resourcequota.yaml") {
		t.Fatalf("update of a dirty package: exit %d, stderr %q", code, stderr)
	}
	gitfixture.Git(t, ws, "commit", "-q", "-am", "edit")

	out, stderr, code = kptbot(t, "pkg", "update", pkg+"@v4", "-o", "json")
	if code != 0 {
		t.Fatalf("pkg update: exit %d\n%s%s", code, out, stderr)
	}
	var res engine.UpdateResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("update -o json: %v\n%s", err, out)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Field != "spec.hard.memory" || res.Conflicts[0].Local != "64G" || res.Conflicts[0].Upstream != "50G" {
		t.Errorf("conflicts = %+v, want spec.hard.memory local 64G upstream 50G", res.Conflicts)
	}
	b, _ = os.ReadFile(rq)
	if !strings.Contains(string(b), `pods: "20"`) || !strings.Contains(string(b), `cpu: "50"`) {
		t.Errorf("after update, resourcequota.yaml lost the local edit or missed upstream's:\n%s", b)
	}
	kf, err := kptpkg.ReadKptfile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	if kf.UpstreamLock.Git.Ref != "basens/v4" || kf.Upstream.Git.Ref != "v4" {
		t.Errorf("lock %+v upstream %+v, want basens/v4", kf.UpstreamLock.Git, kf.Upstream.Git)
	}
	gitfixture.Git(t, ws, "commit", "-q", "-am", "update")

	out, _, code = kptbot(t, "pkg", "diff", pkg)
	if code != 0 || !strings.Contains(out, `+    pods: "20"`) || !strings.Contains(out, "--- upstream/resourcequota.yaml") {
		t.Errorf("pkg diff: exit %d\n%s", code, out)
	}

	kptfile := filepath.Join(pkg, "Kptfile")
	b, _ = os.ReadFile(kptfile)
	pipeline := "pipeline:\n  mutators:\n    - image: set-namespace:v0.4.1\n      configMap:\n        namespace: team-a\n"
	if err := os.WriteFile(kptfile, append(b, pipeline...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = kptbot(t, "fn", "render", pkg)
	if code != 0 {
		t.Fatalf("fn render: exit %d\n%s%s", code, out, stderr)
	}
	b, _ = os.ReadFile(rq)
	if !strings.Contains(string(b), "namespace: team-a") {
		t.Errorf("render did not set the namespace:\n%s", b)
	}
}

func TestGetMatchesKpt(t *testing.T) {
	t.Parallel()
	kpt, err := exec.LookPath("kpt")
	if err != nil {
		t.Skip("kpt CLI not installed")
	}
	bare := gitfixture.Blueprints(t)
	ws := t.TempDir()
	for _, v := range []string{"v1", "v4"} {
		ours := filepath.Join(ws, "ours-"+v, "ns")
		theirs := filepath.Join(ws, "kpt-"+v, "ns")
		os.MkdirAll(filepath.Dir(ours), 0o755)
		os.MkdirAll(filepath.Dir(theirs), 0o755)
		ref := "file://" + bare + "/basens@" + v
		if _, stderr, code := kptbot(t, "pkg", "get", ref, ours, "--for-deployment"); code != 0 {
			t.Fatalf("kptbot pkg get: %s", stderr)
		}
		cmd := exec.Command(kpt, "pkg", "get", ref, theirs, "--for-deployment")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kpt pkg get: %v\n%s", err, out)
		}
		a, _ := kptpkg.ReadTree(ours)
		b, _ := kptpkg.ReadTree(theirs)
		for _, p := range b.Paths() {
			if !bytes.Equal(a[p], b[p]) {
				t.Errorf("%s %s differs from kpt's:\nkptbot:\n%s\nkpt:\n%s", v, p, a[p], b[p])
			}
		}
		if len(a) != len(b) {
			t.Errorf("%s: kptbot wrote %v, kpt %v", v, a.Paths(), b.Paths())
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	bare := gitfixture.Blueprints(t)
	ws := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing tag", []string{"pkg", "get", "file://" + bare + "/basens@v9", filepath.Join(ws, "x")}, `no tag "basens/v9"`},
		{"missing dir", []string{"pkg", "get", "file://" + bare + "/nope@main", filepath.Join(ws, "y")}, `"/nope" does not exist`},
		{"ambiguous", []string{"pkg", "get", "https://example.com/org/repo/pkg", filepath.Join(ws, "z")}, "ambiguous"},
		{"bad strategy", []string{"pkg", "get", "file://" + bare + "/basens@v1", filepath.Join(ws, "w"), "--strategy", "merge"}, "unknown update strategy"},
		{"not a package", []string{"fn", "render", ws}, "no Kptfile"},
		{"update no package", []string{"pkg", "update", filepath.Join(ws, "none"), "--allow-dirty"}, "no Kptfile"},
		{"eval both", []string{"fn", "eval", ws, "--image", "a", "--exec", "b"}, "exactly one of --image and --exec"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := kptbot(t, tc.args...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("kptbot %v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
			}
		})
	}
	for _, d := range []string{"x", "y", "z", "w"} {
		if _, err := os.Stat(filepath.Join(ws, d)); err == nil {
			t.Errorf("failed get left %s behind", d)
		}
	}
}

func TestInitAndList(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "blueprint")
	if _, stderr, code := kptbot(t, "pkg", "init", dir, "--description", "d", "--keywords", "a,b"); code != 0 {
		t.Fatal(stderr)
	}
	kf, err := kptpkg.ReadKptfile(dir)
	if err != nil || kf.Name != "blueprint" || kf.Info.Description != "d" || len(kf.Info.Keywords) != 2 {
		t.Fatalf("init Kptfile = %+v, %v", kf, err)
	}
	if _, stderr, code := kptbot(t, "pkg", "init", dir); code == 0 || !strings.Contains(stderr, "already") {
		t.Errorf("second init: exit %d %s", code, stderr)
	}
	out, _, code := kptbot(t, "fn", "list")
	for _, f := range []string{"set-namespace", "apply-setters", "starlark", "apply-replacements", "set-labels", "set-annotations", "search-replace", "set-image", "ensure-name-substring", "upsert-resource"} {
		if code != 0 || !strings.Contains(out, f) {
			t.Errorf("fn list lacks %s:\n%s", f, out)
		}
	}
}

func TestRenderOutputFlags(t *testing.T) {
	t.Parallel()
	pkg := filepath.Join(t.TempDir(), "app")
	gitfixture.WriteFiles(t, pkg, map[string]string{
		"Kptfile":     "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: set-namespace:v0.4\n      configMap:\n        namespace: prod\n",
		"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
	})
	before, _ := kptpkg.ReadTree(pkg)
	results := t.TempDir()
	out, stderr, code := kptbot(t, "fn", "render", pkg, "-o", "stdout", "--results-dir", results)
	if code != 0 {
		t.Fatalf("render -o stdout: %s", stderr)
	}
	if !strings.Contains(out, "kind: ResourceList") || !strings.Contains(out, "namespace: prod") {
		t.Errorf("-o stdout:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(results, "results.yaml")); err != nil || !strings.Contains(string(b), "set-namespace") {
		t.Errorf("results.yaml: %s %v", b, err)
	}
	after, _ := kptpkg.ReadTree(pkg)
	if a, r, m := before.Changes(after); len(a)+len(r)+len(m) > 0 {
		t.Errorf("-o stdout changed the package: %v %v %v", a, r, m)
	}
	dest := filepath.Join(t.TempDir(), "out")
	if _, stderr, code := kptbot(t, "fn", "render", pkg, "-o", dest); code != 0 {
		t.Fatalf("render -o DIR: %s", stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "deploy.yaml")); !strings.Contains(string(b), "namespace: prod") {
		t.Errorf("-o DIR deploy.yaml:\n%s", b)
	}
	out, _, code = kptbot(t, "fn", "render", pkg, "-o", "unwrap")
	if code != 0 || strings.Contains(out, "ResourceList") || !strings.Contains(out, "namespace: prod") {
		t.Errorf("-o unwrap:\n%s", out)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	gitfixture.WriteFiles(t, dir, map[string]string{
		"good.yaml": "apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: v}\nspec: {upstream: {repo: org/bp, package: basens}, downstream: {package: ns}}\n",
		"bad.yaml":  "apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: v}\nspec: {upstream: {repo: org/bp}, downstream: {package: ns}, deletionPolicy: keep}\n",
	})
	out, stderr, code := kptbot(t, "config", "validate", good)
	if code != 0 || !strings.Contains(out, "valid: 0 Repository, 1 PackageVariant(s)") {
		t.Errorf("validate good: exit %d %s %s", code, out, stderr)
	}
	_, stderr, code = kptbot(t, "config", "validate", bad)
	if code != 1 || !strings.Contains(stderr, "spec.upstream.package: is required") || !strings.Contains(stderr, `spec.deletionPolicy: "keep": expected one of delete, orphan`) {
		t.Errorf("validate bad: exit %d %s", code, stderr)
	}
	out, _, code = kptbot(t, "config", "validate", bad, "-o", "json")
	if code != 1 || !strings.Contains(out, `"field": "spec.deletionPolicy"`) {
		t.Errorf("validate -o json: exit %d %s", code, out)
	}
	out, _, code = kptbot(t, "config", "schema")
	if code != 0 || !strings.Contains(out, `"const": "PackageVariantSet"`) {
		t.Errorf("schema: exit %d", code)
	}
}

func TestPkgList(t *testing.T) {
	t.Parallel()
	bare := gitfixture.Blueprints(t)
	ws := t.TempDir()
	gitfixture.Git(t, ws, "init", "-q", "-b", "main")
	if _, stderr, code := kptbot(t, "pkg", "get", "file://"+bare+"/basens@v2", filepath.Join(ws, "team-a")); code != 0 {
		t.Fatal(stderr)
	}
	gitfixture.Git(t, ws, "add", "-A")
	gitfixture.Git(t, ws, "commit", "-q", "-m", "Approve team-a/v1\n\nkpt:{\"package\":\"team-a\",\"workspaceName\":\"ws\",\"revision\":\"v1\"}")
	gitfixture.Git(t, ws, "tag", "team-a/v1")
	gitfixture.Git(t, ws, "branch", "drafts/team-a/ws2")
	out, stderr, code := kptbot(t, "pkg", "list", "--repo", ws)
	if code != 0 {
		t.Fatal(stderr)
	}
	want := "team-a   v1      ws2     -         file://" + strings.TrimSuffix(bare, ".git") + ".git/basens@v2  v4"
	if !strings.Contains(out, want) {
		t.Errorf("pkg list:\n%s\nwant a row %q", out, want)
	}
	if _, stderr, code := kptbot(t, "pkg", "list"); code == 0 || !strings.Contains(stderr, "--repo is required") {
		t.Errorf("pkg list without --repo: %d %s", code, stderr)
	}
}

// TestRpkgLifecycle walks a package through Porch's lifecycle on a plain
// git repository: clone → pull/edit/push → propose → approve → upgrade.
func TestRpkgLifecycle(t *testing.T) {
	t.Parallel()
	blueprints := gitfixture.Blueprints(t)
	root := t.TempDir()
	deploy := filepath.Join(root, "deploy.git")
	gitfixture.Git(t, root, "init", "-q", "--bare", "-b", "main", deploy)
	wt := gitfixture.WorkTree(t, deploy)
	gitfixture.WriteFiles(t, wt, map[string]string{"README.md": "edge-1\n"})
	gitfixture.CommitAndTag(t, wt, "initial", "")
	run := func(args ...string) string {
		t.Helper()
		out, stderr, code := kptbot(t, args...)
		if code != 0 {
			t.Fatalf("kptbot %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
		}
		return out
	}
	repo := []string{"--repo", deploy}
	run(append([]string{"rpkg", "clone", "file://" + blueprints + "/basens@v2", "team-a", "--workspace", "v1"}, repo...)...)
	// The draft's commit is Porch's: its subject, and the clone task as
	// porchctl rpkg clone records it.
	msg := gitfixture.Git(t, deploy, "log", "-1", "--format=%B", "drafts/team-a/v1")
	if want := `,"task":{"type":"clone","clone":{"upstreamRef":{"type":"git","git":{"repo":"file://` + strings.TrimSuffix(blueprints, ".git") + `","ref":"basens/v2","directory":"/basens","secretRef":{"name":""}}}}}}`; !strings.HasPrefix(msg, "Creating new revision by cloning\n") || !strings.Contains(msg, want) {
		t.Errorf("clone commit lacks Porch's subject or task %s:\n%s", want, msg)
	}
	edit := filepath.Join(root, "edit")
	run(append([]string{"rpkg", "pull", "team-a", edit, "--workspace", "v1"}, repo...)...)
	ns := filepath.Join(edit, "namespace.yaml")
	b, _ := os.ReadFile(ns)
	if err := os.WriteFile(ns, []byte(strings.Replace(string(b), "name: example\n", "name: example\n  labels:\n    team: a\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	run(append([]string{"rpkg", "push", "team-a", edit, "--workspace", "v1"}, repo...)...)
	run(append([]string{"rpkg", "propose", "team-a", "--workspace", "v1"}, repo...)...)
	if out := run(append([]string{"rpkg", "approve", "team-a", "--workspace", "v1"}, repo...)...); !strings.Contains(out, "published as team-a/v1") {
		t.Errorf("approve: %s", out)
	}
	if got := gitfixture.Git(t, deploy, "show", "team-a/v1:team-a/namespace.yaml"); !strings.Contains(got, "team: a") {
		t.Errorf("published namespace.yaml:\n%s", got)
	}
	// An upgrade draft from the published revision: clone it, then merge upstream v3.
	run(append([]string{"rpkg", "clone", "file://" + strings.TrimSuffix(deploy, ".git") + ".git/team-a@v1", "team-a", "--workspace", "upgrade"}, repo...)...)
	gitfixture.Git(t, deploy, "rev-parse", "refs/heads/drafts/team-a/upgrade")
	out := run(append([]string{"rpkg", "get", "team-a"}, repo...)...)
	for _, want := range []string{"deploy.team-a.v1        team-a    v1              1          true     Published", "deploy.team-a.upgrade   team-a    upgrade         0          false    Draft"} {
		if !strings.Contains(out, want) {
			t.Errorf("rpkg get lacks %q:\n%s", want, out)
		}
	}
	// Upgrade a draft to a newer upstream (3-way merge inside the draft).
	run(append([]string{"rpkg", "clone", "file://" + blueprints + "/basens@v2", "team-b", "--workspace", "w"}, repo...)...)
	if out := run(append([]string{"rpkg", "upgrade", "team-b", "--workspace", "w", "--to", "v3"}, repo...)...); !strings.Contains(out, "upgraded to basens/v3") {
		t.Errorf("upgrade: %s", out)
	}
	// Porch's upgrade task: old upstream, new upstream, the revision upgraded.
	msg = gitfixture.Git(t, deploy, "log", "-1", "--format=%B", "drafts/team-b/w")
	up := "file://" + strings.TrimSuffix(blueprints, ".git") + "/basens@"
	if want := string(porch.UpgradeTask(up+"v2", up+"v3", "drafts/team-b/w", porch.ResourceMerge).JSON()); !strings.HasPrefix(msg, "Upgrading revision\n") || !strings.Contains(msg, want) {
		t.Errorf("upgrade commit lacks Porch's subject or task %s:\n%s", want, msg)
	}
	if got := gitfixture.Git(t, deploy, "show", "drafts/team-b/w:team-b/resourcequota.yaml"); !strings.Contains(got, `cpu: "50"`) {
		t.Errorf("upgraded draft resourcequota.yaml:\n%s", got)
	}
	_, stderr, code := kptbot(t, append([]string{"rpkg", "approve", "team-a", "--workspace", "nope"}, repo...)...)
	if code == 0 || !strings.Contains(stderr, "is not proposed") {
		t.Errorf("approving a missing proposal: %d %s", code, stderr)
	}
	gitfixture.Git(t, deploy, "fsck", "--strict")
}

func TestVariantsExpand(t *testing.T) {
	t.Parallel()
	out, stderr, code := kptbot(t, "variants", "expand", filepath.Join("..", "..", "config", "testdata", "design-example.yaml"), "--repository", "edge-2:kptbot.dev/topic=edge", "--repository", "core-1:kptbot.dev/topic=core")
	if code != 0 {
		t.Fatal(stderr)
	}
	if strings.Count(out, "kind: PackageVariant\n") != 3 || !strings.Contains(out, "name: edge-namespaces-edge-2-edge-2-ns") || strings.Contains(out, "core-1") {
		t.Errorf("expand:\n%s", out)
	}
	// The output is itself a valid kptbot.yaml.
	f := filepath.Join(t.TempDir(), "kptbot.yaml")
	if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := kptbot(t, "config", "validate", f); code != 0 {
		t.Errorf("expanded variants do not validate: %s", stderr)
	}
}

func TestWebhookParse(t *testing.T) {
	t.Parallel()
	gh := filepath.Join("..", "..", "testdata", "webhooks", "github", "derived", "pull_request_review.submitted.approved.payload.json")
	out, stderr, code := kptbot(t, "webhook", "parse", gh, "--forge", "github", "--event", "pull_request_review")
	if code != 0 || !strings.Contains(out, `"kind": "review.submitted"`) || !strings.Contains(out, `"state": "approved"`) {
		t.Errorf("github: exit %d %s %s", code, out, stderr)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("s3cret\n"), 0o600)
	if _, stderr, code := kptbot(t, "webhook", "parse", gh, "--forge", "github", "--event", "pull_request_review", "--secret-file", secret, "--signature", "sha256=00"); code == 0 || !strings.Contains(stderr, "does not match") {
		t.Errorf("bad signature accepted: %d %s", code, stderr)
	}
	gl := filepath.Join("..", "..", "testdata", "webhooks", "gitlab", "tag_push.json")
	out, stderr, code = kptbot(t, "webhook", "parse", gl, "--forge", "gitlab", "--event", "Tag Push Hook", "--secret-file", secret)
	if code != 0 || !strings.Contains(out, `"kind": "tag.pushed"`) {
		t.Errorf("gitlab: exit %d %s %s", code, out, stderr)
	}
}
