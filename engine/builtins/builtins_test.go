package builtins

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	kptfn "github.com/kptdev/kpt/pkg/fn"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Built-ins must plug into kpt wherever it takes a function runner.
var _ kptfn.FunctionRunner = (*Function)(nil)

func TestLookup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		image string
		want  string // function name, "" for no match
	}{
		{"set-labels:v0.2.0", "set-labels"},
		{"set-labels:v0.1", "set-labels"},
		{"set-labels", "set-labels"},
		{"ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2", "set-labels"},
		{"ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.3", "set-labels"},
		{"gcr.io/kpt-fn/set-namespace:v0.4.1", "set-namespace"},
		{"gcr.io/kpt-fn/set-namespace:v0.1", "set-namespace"},
		{"gcr.io/kpt-fn/set-namespace", "set-namespace"},
		{"set-namespace:latest", "set-namespace"},
		{"ghcr.io/kptdev/krm-functions-catalog/apply-setters:unstable", "apply-setters"},
		{"apply-setters:v0.2.2", "apply-setters"},
		{"starlark:v0.5.5", "starlark"},
		{"starlark:v0.1.0", "starlark"},
		{"apply-replacements:v0.1.1", "apply-replacements"},
		{"search-replace:v0.2.0", "search-replace"},
		{"set-annotations:v0.1.4", "set-annotations"},
		{"set-image:v0.1.1", "set-image"},
		{"ensure-name-substring:v0.2.0", "ensure-name-substring"},
		{"upsert-resource:v0.2.0", "upsert-resource"},

		// incompatible versions
		{"set-labels:v0.3.0", ""},
		{"set-labels:v1.0", ""},
		{"set-namespace:v0.5.0", ""},
		{"apply-replacements:v0.2.0", ""},
		{"set-annotations:v0.2", ""},
		// tags that are not versions
		{"set-labels:v0.2.0-rc.1", ""},
		{"set-labels:0.2.0", ""},
		{"set-labels:v0", ""},
		{"set-labels:v0.2.0.1", ""},
		{"set-labels:", ""},
		// digests may pin other code than this
		{"set-labels@sha256:3cbbd11b65aab276c8578c039d0c21d0ffb7a496e09c0f632bac1a1b2c115256", ""},
		{"gcr.io/kpt-fn/set-labels:v0.2.0@sha256:3cbbd11b65aab276c8578c039d0c21d0ffb7a496e09c0f632bac1a1b2c115256", ""},
		// other registries and paths
		{"docker.io/library/set-labels:v0.2", ""},
		{"example.com/kpt-fn/set-namespace:v0.4", ""},
		{"ghcr.io/kptdev/krm-functions-catalog/extra/set-labels:v0.2", ""},
		{"gcr.io/kpt-fn-contrib/set-labels:v0.2", ""},
		{"localhost:5000/set-labels:v0.2", ""},
		// unknown functions
		{"kubeval:v0.3", ""},
		{"gcr.io/kpt-fn/gatekeeper:v0.2", ""},
		{"", ""},
		{"ghcr.io/kptdev/krm-functions-catalog/", ""},
	}
	for _, tt := range tests {
		f, ok := Lookup(tt.image)
		got := ""
		if ok {
			got = f.Name
		} else if f != nil {
			t.Errorf("Lookup(%q) returned a function with ok=false", tt.image)
		}
		if got != tt.want {
			t.Errorf("Lookup(%q) = %q, want %q", tt.image, got, tt.want)
		}
	}
}

func TestAll(t *testing.T) {
	t.Parallel()
	all := All()
	// set-labels has two implementations: v0.2 and v0.1
	if len(all) != 11 {
		t.Fatalf("All() has %d functions, want 11", len(all))
	}
	if !sort.SliceIsSorted(all, func(i, j int) bool { return all[i].Name < all[j].Name }) {
		t.Error("All() is not sorted by name")
	}
	for _, f := range all {
		if f.Description == "" || len(f.Versions) == 0 || f.run == nil {
			t.Errorf("%s is incomplete: %+v", f.Name, f)
		}
		for _, v := range f.Versions {
			if l, ok := tagLine(v); !ok || l != v {
				t.Errorf("%s: version %q is not of the form vX.Y", f.Name, v)
			}
		}
	}
	// the caller owns the slice
	all[0].Name = "changed"
	if All()[0].Name == "changed" {
		t.Error("All() shares state between calls")
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	t.Parallel()
	f, _ := Lookup("set-labels")
	for _, in := range []string{
		"",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
		"items: [",
		"- a\n- b\n",
	} {
		var out bytes.Buffer
		err := f.Run(strings.NewReader(in), &out)
		if err == nil {
			t.Errorf("Run(%q) succeeded, want error", in)
			continue
		}
		if !strings.HasPrefix(err.Error(), "set-labels: ") {
			t.Errorf("Run(%q) error %q does not name the function", in, err)
		}
	}
	var zero Function
	if err := zero.Run(strings.NewReader(""), &bytes.Buffer{}); err == nil {
		t.Error("zero Function ran")
	}
}

// TestRunWithoutItems covers kpt render passing no items and no config.
func TestRunWithoutItems(t *testing.T) {
	t.Parallel()
	f, _ := Lookup("set-annotations")
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n  data:\n    a: b\n"
	var out bytes.Buffer
	if err := f.Run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n  data:\n    a: b\nresults:\n- message: no annotations applied\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}

	f, _ = Lookup("set-labels")
	out.Reset()
	if err := f.Run(strings.NewReader("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"), &out); err != nil {
		t.Errorf("set-labels without config or resources: %v", err)
	}
	if want := "results:\n- message: '`FunctionConfig` is not given'\n  severity: info\n- message: no input resources\n  severity: info\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("set-labels without config or resources wrote\n%s\nwant it to end in\n%s", out.String(), want)
	}
}

// TestSetLabelsWithoutConfigFails: the catalog's set-labels v0.2, given
// no function config and a resource to label, reports only that the
// config is not given (as info) and fails, as kpt's no-fnconfig e2e case
// records it.
func TestSetLabelsWithoutConfigFails(t *testing.T) {
	t.Parallel()
	f, _ := Lookup("set-labels:v0.2")
	cm := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
	for _, cfg := range []*yaml.RNode{nil, yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata: {}\n")} {
		_, results, err := f.Process([]*yaml.RNode{cm.Copy()}, cfg)
		if err == nil {
			t.Errorf("config %v: set-labels succeeded", cfg)
		}
		if len(results) != 1 || results[0].Message != "`FunctionConfig` is not given" || results[0].Severity != fn.Info {
			t.Errorf("config %v: results %v, want only the info that the config is not given", cfg, results)
		}
	}
}

func TestExplain(t *testing.T) {
	t.Parallel()
	tests := []struct{ image, want string }{
		{"set-label:v0.2", `no built-in is named "set-label"; did you mean "set-labels"?; built-ins: apply-replacements, `},
		{"ghcr.io/kptdev/krm-functions-catalog/set-namespce:v0.4", `did you mean "set-namespace"?`},
		{"starlark-fn:v0.5", `did you mean "starlark"?`},
		{"kubeval:v0.3", `no built-in is named "kubeval"; built-ins: apply-replacements`},
		{"set-labels:v0.3.0", `the built-in set-labels does not support the tag "v0.3.0"; supported tags: v0.1.x, v0.2.x, latest, unstable, or no tag`},
		{"gcr.io/kpt-fn/set-namespace:v1", `supported tags: v0.1.x, v0.2.x, v0.3.x, v0.4.x, latest`},
		{"set-labels@sha256:3cbbd11b", `a digest (@sha256:3cbbd11b) pins a build`},
		{"docker.io/library/set-labels:v0.2", `only images of the catalog (ghcr.io/kptdev/krm-functions-catalog/set-labels or gcr.io/kpt-fn/set-labels) run as the built-in set-labels, not docker.io/library/set-labels`},
		{"set-labels:v0.2", ""},
	}
	for _, tt := range tests {
		got := Explain(tt.image)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("Explain(%q) = %q, want it to contain %q", tt.image, got, tt.want)
		}
	}
	if strings.Contains(Explain("kubeval:v0.3"), "did you mean") {
		t.Errorf("Explain suggests a built-in for an unrelated name: %q", Explain("kubeval:v0.3"))
	}
}
