package kptpkg_test

import (
	"github.com/kptbot/kptbot/engine/internal/enginetest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/render"
)

// TestWritePackageMatchesKio writes the same resources with writePackage
// and with kio.LocalPackageWriter and requires the same files and errors:
// wide and compact sequences, JSON, bare sequences, resources whose only
// annotations are the reader's, resources without path or index
// annotations, duplicated metadata, bad indexes and paths.
func TestWritePackageMatchesKio(t *testing.T) {
	t.Parallel()
	pkg := enginetest.GenPackage(25, 1)
	pkg["wide.yaml"] = []byte("apiVersion: v1\nkind: List\nmetadata:\n  name: l\n  annotations:\n    keep: me\nitems:\n  - a\n  - b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: second\n")
	pkg["j.json"] = []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}`)
	pkg["two.json"] = []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j1"}}` + "\n---\n" + `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j2"}}`)
	pkg["bare.yaml"] = []byte("- a\n- b\n")
	pkg["scalars.yaml"] = []byte("# head of the file\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\ndata:\n  a: |+\n    kept\n\n---\n# head of the second\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fold\ndata:\n  b: >-\n    folded\n  c: |\n    lit\n# foot of the second\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: last\ndata:\n  d: |+\n    kept last\n\n")
	pkg["nometa.yaml"] = []byte("apiVersion: v1\nkind: Foo\nmetadata: {}\n")
	pkg["sub/dir/deep.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: # c\n  name: deep\n  annotations: {}\n")

	edits := map[string]func(ns []*yaml.RNode) []*yaml.RNode{
		"as read": func(ns []*yaml.RNode) []*yaml.RNode { return ns },
		"reversed, new resources without annotations": func(ns []*yaml.RNode) []*yaml.RNode {
			var out []*yaml.RNode
			for i := len(ns) - 1; i >= 0; i-- {
				out = append(out, ns[i])
			}
			_ = ns[3].PipeE(yaml.ClearAnnotation(kioutil.IndexAnnotation))
			_ = ns[4].PipeE(yaml.ClearAnnotation(kioutil.LegacyPathAnnotation)) //nolint:staticcheck // testing kio's copy
			_ = ns[5].PipeE(yaml.SetAnnotation(kioutil.IdAnnotation, "7"))
			return append(out, yaml.MustParse("apiVersion: v1\nkind: Secret\nmetadata:\n  name: new\n  namespace: ns\n"),
				yaml.MustParse("apiVersion: v1\nkind: Secret\nmetadata:\n  name: new2\n  annotations:\n    config.kubernetes.io/path: added.yaml\n"))
		},
		"resources sharing metadata": func(ns []*yaml.RNode) []*yaml.RNode {
			// A function may leave two resources pointing at one metadata
			// node; kio copies each before clearing its annotations.
			var deps []*yaml.RNode
			for _, n := range ns {
				if n.GetKind() == "Deployment" {
					deps = append(deps, n)
				}
			}
			_ = deps[0].PipeE(yaml.SetAnnotation(kioutil.SeqIndentAnnotation, string(yaml.WideSequenceStyle)))
			md := deps[0].Field("metadata").Value.YNode()
			for _, d := range deps[1:3] {
				c := d.YNode().Content
				for i := 0; i+1 < len(c); i += 2 {
					if c[i].Value == "metadata" {
						c[i+1] = md
					}
				}
			}
			return ns
		},
		"duplicate annotation": func(ns []*yaml.RNode) []*yaml.RNode {
			ann := ns[2].Field("metadata").Value.Field("annotations").Value.YNode()
			ann.Content = append(ann.Content, ann.Content[0], ann.Content[1])
			return ns
		},
		"index not a number": func(ns []*yaml.RNode) []*yaml.RNode {
			_ = ns[1].PipeE(yaml.SetAnnotation(kioutil.IndexAnnotation, "x"))
			return ns
		},
		"absolute path": func(ns []*yaml.RNode) []*yaml.RNode {
			_ = ns[1].PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, "/etc/x.yaml"))
			return ns
		},
		"path outside": func(ns []*yaml.RNode) []*yaml.RNode {
			_ = ns[1].PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, "../x.yaml"))
			return ns
		},
		"path is a directory": func(ns []*yaml.RNode) []*yaml.RNode {
			_ = ns[1].PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, "sub"))
			return ns
		},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			results := map[string]kptpkg.Tree{}
			errs := map[string]string{}
			for _, who := range []string{"kio", "kptbot"} {
				dir := filepath.Join(base, who)
				if err := pkg.Write(dir); err != nil {
					t.Fatal(err)
				}
				nodes, err := kio.LocalPackageReader{PackagePath: dir, PackageFileName: kptpkg.KptfileName, MatchFilesGlob: render.MatchAllKRM,
					IncludeSubpackages: true, PreserveSeqIndent: true, WrapBareSeqNode: true,
					SetAnnotations: map[string]string{kptpkg.MergeSourceAnnotation: "x"}}.Read()
				if err != nil {
					t.Fatal(err)
				}
				// Write into an empty package: every file is the writer's.
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
				nodes = edit(nodes)
				clear := []string{kptpkg.MergeSourceAnnotation}
				if who == "kio" {
					err = kio.LocalPackageWriter{PackagePath: dir, ClearAnnotations: clear}.Write(nodes)
				} else {
					err = kptpkg.WritePackage(filesys.FileSystemOrOnDisk{}, dir, nodes, clear)
				}
				if err != nil {
					errs[who] = strings.ReplaceAll(err.Error(), dir, "<pkg>")
				}
				if results[who], err = kptpkg.ReadTree(dir); err != nil {
					t.Fatal(err)
				}
			}
			if errs["kio"] != errs["kptbot"] {
				t.Fatalf("errors differ: kio %q, kptbot %q", errs["kio"], errs["kptbot"])
			}
			if errs["kio"] == "" && len(results["kio"]) < len(pkg)-1 {
				t.Fatalf("kio wrote %d files of %d", len(results["kio"]), len(pkg))
			}
			if d := cmp.Diff(results["kio"], results["kptbot"]); d != "" {
				t.Fatalf("written packages differ (-kio +kptbot):\n%s", d)
			}
		})
	}
}
