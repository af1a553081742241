package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/fneval"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/render"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

// TestGetFetchesRemoteSubpackages: a subpackage whose Kptfile names an
// upstream but has no lock is fetched from that upstream, as kpt does.
func TestGetFetchesRemoteSubpackages(t *testing.T) {
	t.Parallel()
	blueprints := gitfixture.Blueprints(t)
	root := t.TempDir()
	bare := filepath.Join(root, "app.git")
	gitfixture.Git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	wt := gitfixture.WorkTree(t, bare)
	gitfixture.WriteFiles(t, wt, map[string]string{
		"app/Kptfile":         "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n",
		"app/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n",
		"app/ns/Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ns\nupstream:\n  type: git\n  git:\n    repo: " +
			strings.TrimSuffix(blueprints, ".git") + "\n    directory: /basens\n    ref: v3\n",
	})
	gitfixture.CommitAndTag(t, wt, "app", "app/v1")
	dest := filepath.Join(t.TempDir(), "my-app")
	res, err := Get(context.Background(), fetch.NewClient(), dest, GetOptions{Repo: strings.TrimSuffix(bare, ".git"), Dir: "/app", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Packages) != 2 || res.Packages[1].Path != "ns" || res.Packages[1].Resolved.Ref != "basens/v3" {
		t.Fatalf("fetched %+v, want the root and ns at basens/v3", res.Packages)
	}
	kf, err := kptpkg.ReadKptfile(filepath.Join(dest, "ns"))
	if err != nil {
		t.Fatal(err)
	}
	if kf.UpstreamLock == nil || kf.UpstreamLock.Git.Ref != "basens/v3" || kf.Name != "ns" {
		t.Errorf("ns Kptfile = %+v", kf)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "ns", "resourcequota.yaml")); err != nil || !strings.Contains(string(b), `cpu: "50"`) {
		t.Errorf("ns/resourcequota.yaml = %q, %v", b, err)
	}
}

// TestUpdateKeepsUntouchedBytes: files upstream did not change keep their
// exact bytes through an update, comments and odd formatting included.
func TestUpdateKeepsUntouchedBytes(t *testing.T) {
	t.Parallel()
	bare := gitfixture.Blueprints(t)
	repo := strings.TrimSuffix(bare, ".git")
	dest := filepath.Join(t.TempDir(), "ns")
	ctx := context.Background()
	if _, err := Get(ctx, fetch.NewClient(), dest, GetOptions{Repo: repo, Dir: "/basens", Version: "v2"}); err != nil {
		t.Fatal(err)
	}
	odd := "# owned by team a\napiVersion: v1\nkind: Namespace\nmetadata: # kpt-merge: /example\n  name: example   # the name\n  annotations:\n    internal.kpt.dev/upstream-identifier: '|Namespace|default|example'\n    note: \"double-quoted\"\n"
	extra := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local-only\ndata:\n  list: |\n    a\n    b\n"
	gitfixture.WriteFiles(t, dest, map[string]string{"namespace.yaml": odd, "local.yaml": extra})
	if _, err := Update(ctx, fetch.NewClient(), dest, UpdateOptions{Version: "v3"}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"namespace.yaml": odd, "local.yaml": extra} {
		got, err := os.ReadFile(filepath.Join(dest, name))
		if err != nil || !bytes.Equal(got, []byte(want)) {
			t.Errorf("%s changed:\n%s\nwant:\n%s", name, got, want)
		}
	}
}

// TestRenderOutputs covers -o stdout/unwrap and --results-dir.
func TestRenderOutputs(t *testing.T) {
	t.Parallel()
	in, err := kptpkg.ReadTree(filepath.Join("render", "testdata", "render", "subpackages", "in"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := render.RenderTree(context.Background(), in, render.RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wrapped, plain bytes.Buffer
	if err := render.WriteResources(&wrapped, res.Tree, true); err != nil {
		t.Fatal(err)
	}
	if err := render.WriteResources(&plain, res.Tree, false); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(wrapped.String(), "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n") || !strings.Contains(wrapped.String(), "image: postgres:16.2") {
		t.Errorf("-o stdout output:\n%s", wrapped.String())
	}
	if strings.Contains(plain.String(), "ResourceList") || !strings.Contains(plain.String(), "namespace: shop-db") {
		t.Errorf("-o unwrap output:\n%s", plain.String())
	}
	dir := t.TempDir()
	p, err := render.WriteResults(dir, res.Results)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), "kind: FunctionResultList") || !strings.Contains(string(b), "set-image") {
		t.Errorf("results.yaml:\n%s", b)
	}
	// The input tree is not modified.
	if strings.Contains(string(in["db/statefulset.yaml"]), "16.2") {
		t.Error("RenderTree modified its input")
	}
}

func TestEval(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pkg")
	in, err := kptpkg.ReadTree(filepath.Join("render", "testdata", "render", "subpackages", "in"))
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Write(dir); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := fneval.Eval(ctx, dir, fneval.EvalOptions{Image: "set-namespace:v0.4.1", Args: []string{"namespace=eval-ns"}}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"deployment.yaml", "db/statefulset.yaml"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if !strings.Contains(string(b), "namespace: eval-ns") {
			t.Errorf("eval did not reach %s:\n%s", f, b)
		}
	}
	cfg := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  tier: gold\n")
	if _, err := fneval.Eval(ctx, dir, fneval.EvalOptions{Image: "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0", FnConfig: cfg, FnConfigName: "cfg.yaml"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "deployment.yaml")); !strings.Contains(string(b), "tier: gold") {
		t.Errorf("eval with --fn-config:\n%s", b)
	}
	before, _ := kptpkg.ReadTree(dir)
	_, err = fneval.Eval(ctx, dir, fneval.EvalOptions{Exec: "/bin/false"})
	if err == nil || !strings.Contains(err.Error(), "--allow-exec") {
		t.Errorf("exec without --allow-exec: %v", err)
	}
	_, err = fneval.Eval(ctx, dir, fneval.EvalOptions{Exec: "/bin/false", Runtimes: render.Runtimes{AllowExec: true}})
	if err == nil || !strings.Contains(err.Error(), "/bin/false") {
		t.Errorf("failing exec function: %v", err)
	}
	after, _ := kptpkg.ReadTree(dir)
	if a, r, m := before.Changes(after); len(a)+len(r)+len(m) > 0 {
		t.Errorf("failed eval changed the package: %v %v %v", a, r, m)
	}
}

func TestDiffTypes(t *testing.T) {
	t.Parallel()
	bare := gitfixture.Blueprints(t)
	repo := strings.TrimSuffix(bare, ".git")
	dest := filepath.Join(t.TempDir(), "ns")
	ctx := context.Background()
	f := fetch.NewClient()
	if _, err := Get(ctx, f, dest, GetOptions{Repo: repo, Dir: "/basens", Version: "v2"}); err != nil {
		t.Fatal(err)
	}
	if out, err := Diff(ctx, f, dest, DiffOptions{}); err != nil || out != "" {
		t.Fatalf("diff of a fresh package = %q, %v; want empty", out, err)
	}
	b, _ := os.ReadFile(filepath.Join(dest, "resourcequota.yaml"))
	os.WriteFile(filepath.Join(dest, "resourcequota.yaml"), bytes.Replace(b, []byte("memory: 40G"), []byte("memory: 64G"), 1), 0o644)
	tests := []struct {
		typ, version string
		want, not    []string
	}{
		{DiffLocal, "", []string{"-    memory: 40G", "+    memory: 64G"}, nil},
		{DiffRemote, "v3", []string{`-    cpu: "40"`, `+    cpu: "50"`}, []string{"64G"}},
		{DiffCombined, "v3", []string{"-    memory: 50G", "+    memory: 64G"}, nil},
		{Diff3Way, "v3", []string{"# local changes", "# remote changes", "+    memory: 64G", `+    cpu: "50"`}, nil},
	}
	for _, tc := range tests {
		out, err := Diff(ctx, f, dest, DiffOptions{Type: tc.typ, Version: tc.version})
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s diff lacks %q:\n%s", tc.typ, w, out)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out, n) {
				t.Errorf("%s diff has %q:\n%s", tc.typ, n, out)
			}
		}
	}
	if _, err := Diff(ctx, f, dest, DiffOptions{Type: "sideways"}); err == nil {
		t.Error("unknown diff type accepted")
	}
}

// TestRenderKeepsUntouchedBytes: files no function changed keep their
// exact bytes; changed files are written as kpt writes them.
func TestRenderKeepsUntouchedBytes(t *testing.T) {
	t.Parallel()
	odd := "# a comment kpt would keep but re-space\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other   # spaced\n  namespace: apps\ndata: {\"k\": \"v\"}\n"
	in := kptpkg.Tree{
		kptpkg.KptfileName: []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: set-labels:v0.2\n      configMap:\n        tier: web\n      selectors:\n        - kind: Deployment\n"),
		"deploy.yaml":      []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"),
		"other.yaml":       []byte(odd),
	}
	for _, kptOnly := range []bool{false, true} {
		res, err := render.RenderTree(context.Background(), in, render.RenderOptions{KptOnly: kptOnly})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(res.Tree["other.yaml"]); got != odd {
			t.Errorf("kptOnly=%v: other.yaml changed:\n%s", kptOnly, got)
		}
		if !strings.Contains(string(res.Tree["deploy.yaml"]), "tier: web") {
			t.Errorf("kptOnly=%v: deploy.yaml not rendered:\n%s", kptOnly, res.Tree["deploy.yaml"])
		}
		if len(res.Modified) != 1 || res.Modified[0] != "deploy.yaml" {
			t.Errorf("kptOnly=%v: modified %v, want [deploy.yaml]", kptOnly, res.Modified)
		}
	}
}
