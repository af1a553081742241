package engine

import (
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// TestReadPackageMatchesKio requires readPackage to return exactly what
// kio's LocalPackageReader returns (nodes, annotations, order, errors) for
// packages with subpackages, ignored files, JSON, nested directories and
// mixed sequence indentation, on disk and in memory.
func TestReadPackageMatchesKio(t *testing.T) {
	t.Parallel()
	pkg := genPackage(40, 1)
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
	bad := Tree{KptfileName: pkg[KptfileName], "a.yaml": pkg["resources-0000.yaml"], "b.yaml": []byte("a: [\n"), "c.yaml": []byte("x: : y\n")}

	for name, tree := range map[string]Tree{"package": pkg, "bad": bad} {
		dir := filepath.Join(t.TempDir(), "pkg")
		if err := tree.Write(dir); err != nil {
			t.Fatal(err)
		}
		mem, err := tree.memFS("/pkg")
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
						PackagePath: c.path, PackageFileName: KptfileName, MatchFilesGlob: matchAllKRM,
						IncludeSubpackages: subs, PreserveSeqIndent: true, WrapBareSeqNode: true,
						SetAnnotations: map[string]string{pkgPathAnnotation: c.path},
						FileSystem:     filesys.FileSystemOrOnDisk{FileSystem: c.fs},
					}
				}
				want, werr := reader().Read()
				got, gerr := readPackage(reader())
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
	if _, err := readPackage(kio.LocalPackageReader{PackagePath: "/does/not/exist"}); err == nil {
		t.Fatal("reading a missing package succeeded")
	}
}
