package pkgmerge

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kptdev/kpt/pkg/lib/update"
	"github.com/kptdev/kpt/pkg/lib/update/updatetypes"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/internal/enginetest"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/golden"
)

// TestResourceMergeMatchesKpt runs kpt's own ResourceMergeUpdater and
// kptbot's map-matched merge on the same random triples and requires
// byte-identical packages.
func TestResourceMergeMatchesKpt(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewSource(seed))
		origin := enginetest.GenPackage(30+r.Intn(30), 1)
		origin["README.md"] = []byte("readme\n")
		updated := enginetest.Mutate(origin, r, "up")
		local := enginetest.Mutate(origin, r, "local")
		if seed%10 == 0 {
			// a duplicate resource: both must fail, and say the same
			for _, p := range local.Paths() {
				if strings.HasSuffix(p, ".yaml") && strings.Contains(string(local[p]), "kind: Service") {
					doc := strings.Split(string(local[p]), "---\n")[0]
					local[p] = append(local[p], []byte("---\n"+doc)...)
					break
				}
			}
		}
		write := treeWriter(t, t.TempDir())
		// Each merge gets its own copies: kpt's updater is not guaranteed
		// to leave its inputs alone.
		o1, u1, l1 := write("o1", origin), write("u1", updated), write("kpt", local)
		o2, u2, l2 := write("o2", origin), write("u2", updated), write("kptbot", local)
		// kpt's update command adds merge comments to the three trees on
		// disk first; kptbot adds them to what it parses.
		if err := AddMergeCommentsToDirs(o1, u1, l1); err != nil {
			t.Fatal(err)
		}
		err1 := update.GetUpdater("resource-merge").Update(updatetypes.Options{RelPackagePath: ".", LocalPath: l1, UpdatedPath: u1, OriginPath: o1, IsRoot: true})
		_, err2 := ResourceMerge(l2, u2, o2, true, nil)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("seed %d: kpt error %v, kptbot error %v", seed, err1, err2)
		}
		if seed%10 == 0 {
			if err1 == nil || !strings.Contains(err2.Error(), "found duplicate") || !strings.Contains(err1.Error(), "found duplicate") {
				t.Fatalf("seed %d: a duplicate resource: kpt error %v, kptbot error %v", seed, err1, err2)
			}
			continue
		}
		// Compare what Update leaves on disk: files whose meaning did not
		// change keep the local bytes (preserveUntouched), whoever wrote them.
		want, _ := kptpkg.ReadTree(l1)
		got, _ := kptpkg.ReadTree(l2)
		kptpkg.PreserveUntouched(local, want)
		kptpkg.PreserveUntouched(local, got)
		for _, p := range golden.UnionPaths(want, got) {
			if string(want[p]) != string(got[p]) && os.Getenv("MERGE_DUMP") != "" {
				os.WriteFile(fmt.Sprintf("/tmp/md-%d-kpt-%s", seed, filepath.Base(p)), want[p], 0o644)
				os.WriteFile(fmt.Sprintf("/tmp/md-%d-bot-%s", seed, filepath.Base(p)), got[p], 0o644)
				for n, tr := range map[string]kptpkg.Tree{"o": origin, "u": updated, "l": local} {
					os.WriteFile(fmt.Sprintf("/tmp/md-%d-%s-%s", seed, n, filepath.Base(p)), tr[p], 0o644)
				}
			}
			if string(want[p]) != string(got[p]) {
				t.Errorf("seed %d: %s differs (-kpt +kptbot):\n%s", seed, p, cmp.Diff(string(want[p]), string(got[p])))
			}
		}
	}
}

// TestQuickMergeKeyMatchesKyaml requires the merge key read straight from
// the nodes to equal the one kyaml's GetMeta and CopyLegacyAnnotations
// give, for every resource shape where it answers, and to leave the
// unusual shapes to kyaml.
func TestQuickMergeKeyMatchesKyaml(t *testing.T) {
	t.Parallel()
	docs := []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: # kpt-merge: ns/old\n  name: a\n  namespace: b\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/path: x.yaml\n    config.k8s.io/path: x.yaml\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/path: x.yaml\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.k8s.io/path: legacy.yaml\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    internal.config.kubernetes.io/path: ''\n    config.kubernetes.io/path: ''\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/path: ~\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/path: a.yaml\n    config.kubernetes.io/path: b.yaml\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: {}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: ~\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    !!null ~: x\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n",
		"apiVersion: v1\nkind: ConfigMap\n",
		"kind: ConfigMap\nmetadata:\n  labels:\n    a: b\n",
		"metadata:\n  creationTimestamp: null\n",
		"metadata:\n  name: ''\n  namespace: ~\n",
		"apiVersion: ~\nkind: ''\nmetadata:\n  name: x # kpt-merge: only-ns\n",
		"apiVersion: example.com/v1beta1\nkind: Thing\nmetadata: # kpt-merge: /cluster-scoped\n  name: x\n  namespace: !!null n\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: [a]\n",
		"- a\n- b\n",
		"plain\n",
	}
	quick := 0
	for _, d := range docs {
		want, werr := slowMergeKey(yaml.MustParse(d))
		n := yaml.MustParse(d)
		got, ok := quickMergeKey(n)
		if !ok {
			continue
		}
		quick++
		if werr != nil || got != want {
			t.Errorf("%q: quick key %q, kyaml's %q (error %v)", d, got, want, werr)
		}
	}
	if quick < 8 {
		t.Errorf("the quick key answered for only %d shapes", quick)
	}
	for _, f := range enginetest.GenPackage(30, 1) {
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(f), SetAnnotations: map[string]string{kioutil.PathAnnotation: "p.yaml", kioutil.LegacyPathAnnotation: "p.yaml"}}).Read() //nolint:staticcheck // the reader sets both
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			got, ok := quickMergeKey(n)
			want, err := slowMergeKey(n.Copy())
			if !ok || err != nil || got != want {
				t.Fatalf("%s: quick key %q (answered %v), kyaml's %q (error %v)", n.MustString(), got, ok, want, err)
			}
		}
	}
}

// TestMergeErrorsAsKpt: with several broken files, the per-file merge
// reports the error kpt's whole-package merge reports: every file of a
// tree is read before any resource is matched, and the origin before
// upstream before the local package.
func TestMergeErrorsAsKpt(t *testing.T) {
	t.Parallel()
	dup := func(tr kptpkg.Tree, p string) {
		tr[p] = append(append([]byte{}, tr[p]...), []byte("---\n"+strings.Split(string(tr[p]), "---\n")[0])...)
	}
	broken := func(tr kptpkg.Tree, p string) {
		tr[p] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n")
	}
	for name, breakIt := range map[string]func(o, u, l kptpkg.Tree){
		"duplicate before unparsable, same tree": func(o, _, _ kptpkg.Tree) { dup(o, "resources-0000.yaml"); broken(o, "resources-0002.yaml") },
		"duplicate in origin, unparsable local":  func(o, _, l kptpkg.Tree) { dup(o, "resources-0002.yaml"); broken(l, "resources-0000.yaml") },
		"unparsable upstream, duplicate local":   func(_, u, l kptpkg.Tree) { broken(u, "resources-0002.yaml"); dup(l, "resources-0000.yaml") },
		"duplicates in two local files":          func(_, _, l kptpkg.Tree) { dup(l, "resources-0002.yaml"); dup(l, "resources-0001.yaml") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			origin := enginetest.GenPackage(30, 1)
			updated, local := enginetest.GenPackage(30, 2), enginetest.GenPackage(30, 1)
			breakIt(origin, updated, local)
			write := treeWriter(t, t.TempDir())
			o1, u1, l1 := write("o1", origin), write("u1", updated), write("l1", local)
			o2, u2, l2 := write("o2", origin), write("u2", updated), write("l2", local)
			_ = AddMergeCommentsToDirs(o1, u1, l1)
			kerr := update.GetUpdater("resource-merge").Update(updatetypes.Options{RelPackagePath: ".", LocalPath: l1, UpdatedPath: u1, OriginPath: o1, IsRoot: true})
			_, err := ResourceMerge(l2, u2, o2, true, nil)
			if kerr == nil || err == nil {
				t.Fatalf("kpt error %v, kptbot error %v: both must fail", kerr, err)
			}
			// the file named, and whether it is a duplicate, must agree
			for _, f := range []string{"resources-0000.yaml", "resources-0001.yaml", "resources-0002.yaml"} {
				if strings.Contains(kerr.Error(), f) != strings.Contains(err.Error(), f) {
					t.Errorf("kpt: %v\nkptbot: %v\nthey disagree about %s", kerr, err, f)
				}
			}
			if strings.Contains(kerr.Error(), "duplicate") != strings.Contains(err.Error(), "duplicate") {
				t.Errorf("kpt: %v\nkptbot: %v\nthey disagree about the kind of error", kerr, err)
			}
		})
	}
}

// treeWriter returns a function writing a tree to dir/name and returning
// that path.
func treeWriter(t *testing.T, dir string) func(name string, tr kptpkg.Tree) string {
	return func(name string, tr kptpkg.Tree) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := tr.Write(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
}
