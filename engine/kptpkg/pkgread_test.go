package kptpkg_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/internal/enginetest"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/pkgmerge"
	"github.com/kptbot/kptbot/engine/render"
)

// TestReadPackageMatchesKio requires readPackage to return exactly what
// kio's LocalPackageReader returns (nodes, annotations, order, errors) for
// packages with subpackages, ignored files, JSON, nested directories and
// mixed sequence indentation, on disk and in memory.
func TestReadPackageMatchesKio(t *testing.T) {
	t.Parallel()
	pkg := enginetest.GenPackage(40, 1)
	pkg[".krmignore"] = []byte("ignored/\n")
	pkg["ignored/x.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ignored\n")
	pkg["nested/deeper/wide.yaml"] = []byte("apiVersion: v1\nkind: List\nmetadata:\n  name: l\nitems:\n  - a\n  - b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nolist\n")
	pkg["nested/cm.json"] = []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}`)
	pkg["sub/Kptfile"] = []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n")
	pkg["sub/r.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: in-sub\n")
	pkg["notes.txt"] = []byte("not read\n")
	pkg["shapes.yaml"] = []byte("# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    x: \"y\"\n    internal.config.kubernetes.io/seqindent: \"wide\"\n--- # separator comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations: {}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n---\napiVersion: v1\nkind: ConfigMap\n---\nnull\n---\napiVersion: v1\nkind: List\nmetadata:\n  name: l\nitems:\n- a\n- b\n")
	pkg["crlf.yaml"] = []byte("apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf\r\ndata:\r\n  a: |\r\n    x\r\n")
	pkg["withid.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: id\n  annotations:\n    internal.config.kubernetes.io/id: '3'\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: id2\n")
	pkg["oldpath.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\n  annotations:\n    config.kubernetes.io/path: elsewhere.yaml\n")
	pkg["dup.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n  annotations:\n    a: b\n    a: c\n")
	bad := kptpkg.Tree{kptpkg.KptfileName: pkg[kptpkg.KptfileName], "a.yaml": pkg["resources-0000.yaml"], "b.yaml": []byte("a: [\n"), "c.yaml": []byte("x: : y\n")}

	for name, tree := range map[string]kptpkg.Tree{"package": pkg, "bad": bad} {
		dir := filepath.Join(t.TempDir(), "pkg")
		if err := tree.Write(dir); err != nil {
			t.Fatal(err)
		}
		mem, err := tree.MemFS("/pkg")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			where string
			path  string
			fs    filesys.FileSystem
		}{{"disk", dir, nil}, {"memory", "/pkg", mem}} {
			for _, subs := range []bool{false, true} {
				reader := func() kio.LocalPackageReader {
					return kio.LocalPackageReader{
						PackagePath: c.path, PackageFileName: kptpkg.KptfileName, MatchFilesGlob: render.MatchAllKRM,
						IncludeSubpackages: subs, PreserveSeqIndent: true, WrapBareSeqNode: true,
						SetAnnotations: map[string]string{render.PkgPathAnnotation: c.path},
						FileSystem:     filesys.FileSystemOrOnDisk{FileSystem: c.fs},
					}
				}
				want, werr := reader().Read()
				got, gerr := kptpkg.ReadPackage(reader())
				if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
					t.Fatalf("%s %s subpackages=%v: kio error %v, readPackage error %v", name, c.where, subs, werr, gerr)
				}
				if (name == "bad") != (werr != nil) {
					t.Fatalf("%s %s subpackages=%v: kio error %v", name, c.where, subs, werr)
				}
				if werr != nil {
					continue
				}
				if len(want) == 0 || len(want) != len(got) {
					t.Fatalf("%s %s subpackages=%v: kio read %d resources, readPackage %d", name, c.where, subs, len(want), len(got))
				}
				for i := range want {
					if w, g := want[i].MustString(), got[i].MustString(); w != g {
						t.Fatalf("%s %s subpackages=%v: resource %d differs:\nkio:\n%s\nreadPackage:\n%s", name, c.where, subs, i, w, g)
					}
				}
			}
		}
	}
	if _, err := kptpkg.ReadPackage(kio.LocalPackageReader{PackagePath: "/does/not/exist"}); err == nil {
		t.Fatal("reading a missing package succeeded")
	}
}

// TestReadPackageResourcesReuse requires a tree read with an earlier
// tree's parse to reuse (same bytes in some files, different in others,
// aliases, kio-only shapes) to give exactly the resources a fresh parse
// gives, and the copies to share no node with the earlier tree.
func TestReadPackageResourcesReuse(t *testing.T) {
	t.Parallel()
	origin := enginetest.GenPackage(30, 1)
	origin["anchors.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: anchored\n  labels: &l\n    a: b\ndata: *l\n")
	origin["legacy.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: legacy # kpt-merge: ns/old\n  annotations:\n    config.k8s.io/id: '1'\n")
	origin["list.yaml"] = []byte("- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: bare\n")
	local := kptpkg.Tree{}
	for p, c := range origin {
		local[p] = c
	}
	local["resources-0001.yaml"] = enginetest.GenPackage(30, 2)["resources-0001.yaml"]
	root := t.TempDir()
	od, ld := filepath.Join(root, "origin"), filepath.Join(root, "local")
	if err := origin.Write(od); err != nil {
		t.Fatal(err)
	}
	if err := local.Write(ld); err != nil {
		t.Fatal(err)
	}
	prev, err := pkgmerge.ReadPackageResources(od, "original", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	reuse := map[string]kptpkg.PackageFile{}
	seen := map[*yaml.Node]bool{}
	for _, f := range prev {
		reuse[f.Rel] = f
		for _, n := range f.Nodes {
			markNodes(n.YNode(), seen)
		}
	}
	want, err := pkgmerge.ReadPackageResources(ld, "dest", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pkgmerge.ReadPackageResources(ld, "dest", reuse, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d files with reuse, %d without", len(got), len(want))
	}
	for i := range want {
		if got[i].Rel != want[i].Rel || len(got[i].Nodes) != len(want[i].Nodes) {
			t.Fatalf("file %d: %s with %d resources with reuse, %s with %d without", i, got[i].Rel, len(got[i].Nodes), want[i].Rel, len(want[i].Nodes))
		}
		for j := range want[i].Nodes {
			g, w := got[i].Nodes[j].MustString(), want[i].Nodes[j].MustString()
			if g != w {
				t.Errorf("%s resource %d with reuse:\n%s\nwithout:\n%s", want[i].Rel, j, g, w)
			}
			if !reflect.DeepEqual(got[i].Nodes[j].YNode(), want[i].Nodes[j].YNode()) {
				t.Errorf("%s resource %d: nodes differ (positions, styles or tags)", want[i].Rel, j)
			}
			shared := map[*yaml.Node]bool{}
			markNodes(got[i].Nodes[j].YNode(), shared)
			for n := range shared {
				if seen[n] {
					t.Fatalf("%s resource %d shares a node with the earlier tree", want[i].Rel, j)
				}
			}
		}
	}
}

func markNodes(n *yaml.Node, seen map[*yaml.Node]bool) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	for _, c := range n.Content {
		markNodes(c, seen)
	}
}

// TestMemTreesReadLikeDisk requires an upstream tree kept in memory by
// memTrees.write to give the merge's resource reader exactly what the same
// tree written to disk gives (files, order, nodes), to leave every other
// file and every directory on disk, and to write trees with subpackages
// whole.
func TestMemTreesReadLikeDisk(t *testing.T) {
	t.Parallel()
	tree := enginetest.GenPackage(40, 1)
	tree[".krmignore"] = []byte("ignored/\n")
	tree["ignored/x.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ignored\n")
	tree["nested/deeper/b.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n")
	tree["nested/a.yml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
	tree["nested/cm.json"] = []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}`)
	tree["notes.txt"] = []byte("not a resource\n")
	tree["only-yaml/c.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
	root := t.TempDir()
	diskDir, memDir := filepath.Join(root, "disk"), filepath.Join(root, "mem")
	if err := tree.Write(diskDir); err != nil {
		t.Fatal(err)
	}
	m := kptpkg.MemTrees{}
	if err := m.Write(tree, memDir, true); err != nil {
		t.Fatal(err)
	}
	if m.FS(memDir) == nil || m.FS(filepath.Join(memDir, "nested")) == nil || m.FS(diskDir) != nil || m.FS(memDir+"x") != nil {
		t.Fatal("memTrees.fs does not find the in-memory tree (or finds one for a disk path)")
	}
	onDisk, err := kptpkg.ReadTree(memDir)
	if err != nil {
		t.Fatal(err)
	}
	for p, c := range tree {
		if _, ok := onDisk[p]; ok == kptpkg.IsYAMLFile(p) {
			t.Errorf("%s: on disk %v, want %v", p, ok, !kptpkg.IsYAMLFile(p))
		} else if ok && !bytes.Equal(onDisk[p], c) {
			t.Errorf("%s: written %q, want %q", p, onDisk[p], c)
		}
		if _, err := os.Stat(filepath.Join(memDir, filepath.Dir(p))); err != nil {
			t.Errorf("directory of %s not made: %v", p, err)
		}
	}
	for _, dir := range []string{"", "nested"} {
		want, err := pkgmerge.ReadPackageResources(filepath.Join(diskDir, dir), "updated", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pkgmerge.ReadPackageResources(filepath.Join(memDir, dir), "updated", nil, m.FS(filepath.Join(memDir, dir)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || len(want) < 2 {
			t.Fatalf("%q: %d files from memory, %d from disk", dir, len(got), len(want))
		}
		for i := range want {
			if got[i].Rel != want[i].Rel || len(got[i].Nodes) != len(want[i].Nodes) {
				t.Fatalf("%q file %d: %s (%d resources) from memory, %s (%d) from disk", dir, i, got[i].Rel, len(got[i].Nodes), want[i].Rel, len(want[i].Nodes))
			}
			for j := range want[i].Nodes {
				if g, w := got[i].Nodes[j].MustString(), want[i].Nodes[j].MustString(); g != w {
					t.Errorf("%s resource %d from memory:\n%s\nfrom disk:\n%s", want[i].Rel, j, g, w)
				}
			}
		}
	}

	withSub := kptpkg.Tree{kptpkg.KptfileName: tree[kptpkg.KptfileName], "a.yaml": tree["nested/a.yml"], "sub/Kptfile": []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n")}
	subDir := filepath.Join(root, "sub")
	if err := m.Write(withSub, subDir, true); err != nil {
		t.Fatal(err)
	}
	if got, err := kptpkg.ReadTree(subDir); err != nil || !got.Equal(withSub) || m.FS(subDir) != nil {
		t.Errorf("a tree with a subpackage was not written whole: %v, %v", got.Paths(), err)
	}
}
