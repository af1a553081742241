package variant

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/golden"
)

// TestVariantGolden runs testdata/variant/<case>: in/ is the package,
// variant.yaml the PackageVariant (variant-before.yaml, when present, is
// applied first, as an earlier version of the same variant), sources/ the
// injection sources. want/ is the package afterwards and result.txt the
// changed files and blocking messages, or error.txt the error.
func TestVariantGolden(t *testing.T) {
	for _, name := range golden.CaseDirs(t, "variant") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			caseDir := filepath.Join("testdata", "variant", name)
			disk, err := kptpkg.ReadTree(filepath.Join(caseDir, "in"))
			if err != nil {
				t.Fatal(err)
			}
			in := disk
			pv := readVariant(t, filepath.Join(caseDir, "variant.yaml"))
			sources := readSources(t, filepath.Join(caseDir, "sources"))
			orig := copyTree(disk)

			if golden.Exists(filepath.Join(caseDir, "variant-before.yaml")) {
				before := readVariant(t, filepath.Join(caseDir, "variant-before.yaml"))
				res, err := Apply(in, before, sources)
				if err != nil {
					t.Fatalf("applying variant-before.yaml: %v", err)
				}
				in = res.Tree
			}

			res, err := Apply(in, pv, sources)
			if err != nil {
				golden.CheckFile(t, filepath.Join(caseDir, "error.txt"), []byte(err.Error()+"\n"))
				return
			}
			if golden.Exists(filepath.Join(caseDir, "error.txt")) && !*golden.Update {
				t.Fatalf("Apply succeeded, want the error in error.txt")
			}
			golden.CheckTree(t, filepath.Join(caseDir, "want"), res.Tree, nil)
			golden.CheckFile(t, filepath.Join(caseDir, "result.txt"), []byte(describeResult(res)))

			// The input is not modified, and files not reported as changed
			// keep their bytes.
			assertTreesEqual(t, "input after Apply", orig, disk)
			changed := map[string]bool{}
			for _, p := range res.Changed {
				changed[p] = true
			}
			for p, b := range in {
				if !changed[p] && !bytes.Equal(b, res.Tree[p]) {
					t.Errorf("%s changed but is not in Changed %v", p, res.Changed)
				}
			}

			// Applying the variant again changes nothing.
			again, err := Apply(res.Tree, pv, sources)
			if err != nil {
				t.Fatalf("second application: %v", err)
			}
			assertTreesEqual(t, "second application", res.Tree, again.Tree)
			if len(again.Changed) != 0 {
				t.Errorf("second application changed %v", again.Changed)
			}
			if strings.Join(again.Blocking, "\n") != strings.Join(res.Blocking, "\n") {
				t.Errorf("second application blocking %q, first %q", again.Blocking, res.Blocking)
			}
		})
	}
}

func copyTree(t kptpkg.Tree) kptpkg.Tree {
	out := kptpkg.Tree{}
	for p, b := range t {
		out[p] = append([]byte(nil), b...)
	}
	return out
}

func assertTreesEqual(t *testing.T, what string, want, got kptpkg.Tree) {
	t.Helper()
	for _, p := range golden.UnionPaths(want, got) {
		if !bytes.Equal(want[p], got[p]) {
			t.Errorf("%s: %s differs:\n--- want\n%s\n--- got\n%s", what, p, want[p], got[p])
		}
	}
}

func readVariant(t *testing.T, path string) config.PackageVariant {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pv config.PackageVariant
	if err := yaml.UnmarshalStrict(b, &pv); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pv
}

// readSources parses every file under dir, recording each object's path
// relative to dir as the caller reading a repository's injection sources
// would.
func readSources(t *testing.T, dir string) []*kyaml.RNode {
	t.Helper()
	if !golden.Exists(dir) {
		return nil
	}
	files, err := kptpkg.ReadTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []*kyaml.RNode
	for _, p := range files.Paths() {
		nodes, err := (&kio.ByteReader{
			Reader:         bytes.NewReader(files[p]),
			SetAnnotations: map[string]string{kioutil.PathAnnotation: p},
		}).Read()
		if err != nil {
			t.Fatalf("sources/%s: %v", p, err)
		}
		out = append(out, nodes...)
	}
	return out
}

func describeResult(res *Result) string {
	var b strings.Builder
	b.WriteString("changed:\n")
	for _, p := range res.Changed {
		fmt.Fprintf(&b, "  - %s\n", p)
	}
	b.WriteString("blocking:\n")
	for _, m := range res.Blocking {
		fmt.Fprintf(&b, "  - %s\n", m)
	}
	return b.String()
}

// The names follow Porch's generatePVFuncName, including the double dot of
// an unnamed function.
func TestVariantFuncName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fn   string
		pos  int
		want string
	}{
		{"my-func", 3, "PackageVariant.my-pv.my-func.3"},
		{"", 0, "PackageVariant.my-pv..0"},
	} {
		if got := variantFuncName("my-pv", tc.fn, tc.pos); got != tc.want {
			t.Errorf("variantFuncName(my-pv, %q, %d) = %q, want %q", tc.fn, tc.pos, got, tc.want)
		}
	}
}

func TestVariantIsOwnFunc(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, pv string
		want     bool
	}{
		{"PackageVariant.my-pv.my-func.0", "my-pv", true},
		{"PackageVariant.my-pv..12", "my-pv", true},
		{"PackageVariant.my.pv.my.func.1", "my.pv", true}, // dotted names, which Porch misses
		{"PackageVariant.my-pv.my-func.str", "my-pv", false},
		{"PackageVariant.my-pv.my-func", "my-pv", false},
		{"PackageVariant.my-pv-2.my-func.0", "my-pv", false},
		{"PackageVariant.other.my-func.0", "my-pv", false},
		{"noprefix.my-pv.my-func.0", "my-pv", false},
		{"my-func", "my-pv", false},
		{"", "my-pv", false},
	} {
		if got := isVariantFunc(tc.name, tc.pv); got != tc.want {
			t.Errorf("isVariantFunc(%q, %q) = %v, want %v", tc.name, tc.pv, got, tc.want)
		}
	}
}

func TestVariantInvalid(t *testing.T) {
	t.Parallel()
	pkg := kptpkg.Tree{kptpkg.KptfileName: []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n")}
	for _, tc := range []struct {
		name string
		in   kptpkg.Tree
		pv   config.PackageVariant
		want string
	}{{
		name: "no name",
		in:   pkg,
		want: `applying PackageVariant "": metadata.name: must be set`,
	}, {
		name: "no Kptfile",
		in:   kptpkg.Tree{"a.yaml": []byte("a: 1\n")},
		pv:   config.PackageVariant{Metadata: config.ObjectMeta{Name: "v"}},
		want: `applying PackageVariant "v": Kptfile: not found`,
	}, {
		name: "bad function",
		in:   pkg,
		pv: config.PackageVariant{Metadata: config.ObjectMeta{Name: "v"}, Spec: config.PackageVariantSpec{
			Pipeline: &config.Pipeline{Validators: []kptfilev1.Function{{Name: "x"}}},
		}},
		want: `spec.pipeline.validators[0]: one of image or exec must be set`,
	}, {
		name: "empty injector name",
		in:   pkg,
		pv: config.PackageVariant{Metadata: config.ObjectMeta{Name: "v"}, Spec: config.PackageVariantSpec{
			Injectors: []config.InjectionSelector{{Kind: "ConfigMap"}},
		}},
		want: `spec.injectors[0].name: must not be empty`,
	}, {
		name: "package context without data",
		in: kptpkg.Tree{
			kptpkg.KptfileName:        pkg[kptpkg.KptfileName],
			engine.PackageContextFile: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n"),
		},
		pv: config.PackageVariant{Metadata: config.ObjectMeta{Name: "v"}, Spec: config.PackageVariantSpec{
			PackageContext: &config.PackageContext{Data: map[string]string{"a": "b"}},
		}},
		want: `package-context.yaml: ConfigMap kptfile.kpt.dev: data: must be a map`,
	}, {
		name: "ambiguous source",
		in: kptpkg.Tree{
			kptpkg.KptfileName: pkg[kptpkg.KptfileName],
			"cm.yaml":          []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  annotations:\n    kpt.dev/config-injection: required\n"),
		},
		pv: config.PackageVariant{Metadata: config.ObjectMeta{Name: "v"}, Spec: config.PackageVariantSpec{
			Injectors: []config.InjectionSelector{{Name: "src"}},
		}},
		want: `injection sources: 2 objects v1 ConfigMap "src" (the injection sources, the injection sources): cannot tell which to inject into cm.yaml ConfigMap "cm"`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var sources []*kyaml.RNode
			if tc.name == "ambiguous source" {
				for range 2 {
					sources = append(sources, kyaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\ndata:\n  a: b\n"))
				}
			}
			_, err := Apply(tc.in, tc.pv, sources)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Apply error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// A source without the field to inject leaves the point uninjected, with
// Porch's message, and blocks a required point.
func TestVariantSourceWithoutField(t *testing.T) {
	t.Parallel()
	in := kptpkg.Tree{
		kptpkg.KptfileName: []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n"),
		"ctx.yaml":         []byte("apiVersion: example.com/v1\nkind: Context\nmetadata:\n  name: ctx\n  annotations:\n    kpt.dev/config-injection: required\nspec:\n  a: 1\n"),
	}
	pv := config.PackageVariant{Metadata: config.ObjectMeta{Name: "v"}, Spec: config.PackageVariantSpec{
		Injectors: []config.InjectionSelector{{Name: "site"}},
	}}
	src := kyaml.MustParse("apiVersion: example.com/v1\nkind: Context\nmetadata:\n  name: site\nstatus:\n  a: 2\n")
	res, err := Apply(in, pv, []*kyaml.RNode{src})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.Tree["ctx.yaml"], in["ctx.yaml"]) {
		t.Errorf("ctx.yaml changed:\n%s", res.Tree["ctx.yaml"])
	}
	want := `ctx.yaml: required injection point Context "ctx" has nothing injected: field "spec" not found in resource "site"`
	if len(res.Blocking) != 1 || res.Blocking[0] != want {
		t.Errorf("Blocking = %q, want [%q]", res.Blocking, want)
	}
	kf, err := kptpkg.DecodeKptfile(kptpkg.KptfileName, res.Tree[kptpkg.KptfileName])
	if err != nil {
		t.Fatal(err)
	}
	if kf.Status == nil || len(kf.Status.Conditions) != 1 || kf.Status.Conditions[0].Type != "config.injection.Context.ctx" ||
		kf.Status.Conditions[0].Status != kptfilev1.ConditionFalse || kf.Status.Conditions[0].Reason != ReasonNoResourceSelected {
		t.Errorf("conditions = %+v", kf.Status)
	}
	if kf.Info == nil || len(kf.Info.ReadinessGates) != 1 || kf.Info.ReadinessGates[0].ConditionType != "config.injection.Context.ctx" {
		t.Errorf("readiness gates = %+v", kf.Info)
	}
}

// The condition messages of an injection point left empty are Porch's,
// word for word (injection.go in Porch's packagevariant controller).
func TestVariantInjectionMessagesArePorchs(t *testing.T) {
	t.Parallel()
	in := kptpkg.Tree{
		kptpkg.KptfileName: []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n"),
		"cm.yaml":          []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  annotations:\n    kpt.dev/config-injection: optional\ndata:\n  a: b\n"),
	}
	other := kyaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\ndata:\n  a: c\n")
	secret := kyaml.MustParse("apiVersion: v1\nkind: Secret\nmetadata:\n  name: site\n")
	for _, tc := range []struct {
		name      string
		injectors []config.InjectionSelector
		sources   []*kyaml.RNode
		want      string
	}{
		{"no injectors", nil, []*kyaml.RNode{other}, "no injectors defined"},
		{"no source of the type", []config.InjectionSelector{{Name: "site"}}, []*kyaml.RNode{secret}, "no in-cluster resources of type v1.ConfigMap"},
		{"nothing matched", []config.InjectionSelector{{Name: "site"}}, []*kyaml.RNode{other, secret}, "no resource matched any injection selector for this injection point"},
		{"kind filtered out", []config.InjectionSelector{{Kind: "Secret", Name: "other"}}, []*kyaml.RNode{other}, "no resource matched any injection selector for this injection point"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pv := config.PackageVariant{Metadata: config.ObjectMeta{Name: "v"}, Spec: config.PackageVariantSpec{Injectors: tc.injectors}}
			res, err := Apply(in, pv, tc.sources)
			if err != nil {
				t.Fatal(err)
			}
			kf, err := kptpkg.DecodeKptfile(kptpkg.KptfileName, res.Tree[kptpkg.KptfileName])
			if err != nil {
				t.Fatal(err)
			}
			if kf.Status == nil || len(kf.Status.Conditions) != 1 || kf.Status.Conditions[0].Message != tc.want || kf.Status.Conditions[0].Reason != ReasonNoResourceSelected {
				t.Errorf("conditions = %+v, want message %q", kf.Status, tc.want)
			}
		})
	}
}
