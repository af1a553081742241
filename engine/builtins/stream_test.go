package builtins

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptbot/kptbot/engine/builtins/resourcelist"
	replacements "github.com/kptdev/krm-functions-catalog/functions/go/apply-replacements/replacements"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestStreamMatchesProcess holds every streamable built-in to its
// promise: on every golden input, split into pieces every way tried
// (one piece, one item per piece, random splits), Apply over the pieces
// and Finish edit the items and report exactly what Process reports for
// the whole list. set-namespace's Process is the catalog's own Run, so
// this also checks the streamed form against the catalog.
func TestStreamMatchesProcess(t *testing.T) {
	t.Parallel()
	inputs, err := filepath.Glob(filepath.Join("testdata", "*", "*", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var streamed atomic.Int32
	for _, in := range inputs {
		name := filepath.Base(filepath.Dir(filepath.Dir(in)))
		f, ok := Lookup(imageOf(name))
		if !ok {
			t.Fatalf("Lookup(%q) found nothing", name)
		}
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		variants := map[string]string{"": string(data)}
		if strings.Contains(string(data), dependsOnAnnotation) {
			// the same input without depends-on annotations streams
			var kept []string
			for _, line := range strings.Split(string(data), "\n") {
				if !strings.Contains(line, dependsOnAnnotation) {
					kept = append(kept, line)
				}
			}
			variants["/no-depends-on"] = strings.Join(kept, "\n")
		}
		for suffix, input := range variants {
			t.Run(name+"/"+filepath.Base(filepath.Dir(in))+suffix, func(t *testing.T) {
				t.Parallel()
				if checkStream(t, f, input) {
					streamed.Add(1)
				}
			})
		}
	}
	t.Cleanup(func() {
		if streamed.Load() == 0 {
			t.Error("no golden input streamed")
		}
	})
}

// checkStream compares Stream with Process on input; it reports whether
// the function streamed.
func checkStream(t *testing.T, f *Function, input string) bool {
	t.Helper()
	whole := decode(t, input)
	want, wantResults, wantErr := f.Process(whole.Items, whole.FunctionConfig)

	probe := decode(t, input)
	s, ok := f.Stream(probe.FunctionConfig)
	if f.stream == nil {
		if ok {
			t.Fatalf("%s streams but has no stream", f.Name)
		}
		return false
	}
	if !ok {
		if wantErr == nil && !strings.Contains(input, "namespaceMatcher") {
			t.Fatalf("%s: Stream refused a configuration Process accepts", f.Name)
		}
		return false
	}
	rng := rand.New(rand.NewSource(int64(len(input))))
	n := len(probe.Items)
	splits := [][]int{{n}}
	ones := make([]int, n)
	for i := range ones {
		ones[i] = 1
	}
	splits = append(splits, ones)
	for range 5 {
		var sizes []int
		for left := n; left > 0; {
			k := 1 + rng.Intn(left)
			sizes = append(sizes, k)
			left -= k
		}
		splits = append(splits, sizes)
	}
	for _, sizes := range splits {
		rl := decode(t, input)
		s, _ := f.Stream(rl.FunctionConfig)
		var pieces []Piece
		var err error
		at := 0
		for _, k := range sizes {
			var p Piece
			if p, err = s.Apply(rl.Items[at : at+k]); err != nil {
				break
			}
			pieces = append(pieces, p)
			at += k
		}
		if errors.Is(err, ErrNotStreamable) {
			if !strings.Contains(input, dependsOnAnnotation) {
				t.Fatalf("%s: ErrNotStreamable without a depends-on annotation", f.Name)
			}
			return false
		}
		if err == nil && wantErr != nil {
			// a failure only the whole package shows (set-annotations:
			// two resources with one identity) is Finish's error result
			e := resourcelist.FirstError(s.Finish(pieces))
			if e == nil || f.Name+": "+e.Message != wantErr.Error() {
				t.Fatalf("%s split %v: Finish error %v, Process error %v", f.Name, sizes, e, wantErr)
			}
			continue
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%s split %v: Apply error %v, Process error %v", f.Name, sizes, err, wantErr)
		}
		if err != nil {
			return true
		}
		if f.SortsOutput() {
			// Process hands on the list in the SDK's order; a stream edits
			// each resource where it is (a renderer writes by file)
			sortLikeSDK(rl.Items)
		}
		if diff := cmp.Diff(encodeAll(t, want), encodeAll(t, rl.Items)); diff != "" {
			t.Fatalf("%s split %v: items differ (-process +stream):\n%s", f.Name, sizes, diff)
		}
		if diff := cmp.Diff(wantResults, s.Finish(pieces)); diff != "" {
			t.Fatalf("%s split %v: results differ (-process +stream):\n%s", f.Name, sizes, diff)
		}
	}
	_ = s
	return true
}

func decode(t *testing.T, input string) *resourcelist.List {
	t.Helper()
	rl, err := resourcelist.Decode([]byte(input), nil)
	if err != nil {
		t.Fatal(err)
	}
	return rl
}

func encodeAll(t *testing.T, items []*yaml.RNode) []string {
	t.Helper()
	out := make([]string, len(items))
	for i, it := range items {
		s, err := it.String()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = s
	}
	return out
}

// TestStreamRefuses: what ties resources together does not stream.
func TestStreamRefuses(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"apply-replacements", "starlark", "ensure-name-substring", "upsert-resource"} {
		f, _ := Lookup(name)
		if _, ok := f.Stream(yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")); ok {
			t.Errorf("%s streams; it relates resources to each other", name)
		}
	}
	ns, _ := Lookup("set-namespace")
	if _, ok := ns.Stream(yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {namespace: x, namespaceMatcher: y}\n")); ok {
		t.Error("set-namespace streams with a namespaceMatcher")
	}
	if _, ok := ns.Stream(nil); ok {
		t.Error("set-namespace streams without a config")
	}
	s, ok := ns.Stream(yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {namespace: x}\n"))
	if !ok {
		t.Fatal("set-namespace does not stream a plain namespace")
	}
	dep := yaml.MustParse("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  annotations:\n    config.kubernetes.io/depends-on: /namespaces/a/ServiceAccount/b\n")
	if _, err := s.Apply([]*yaml.RNode{dep}); !errors.Is(err, ErrNotStreamable) {
		t.Errorf("Apply with a depends-on annotation: %v, want ErrNotStreamable", err)
	}
	plain := yaml.MustParse("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: a\n")
	p, err := s.Apply([]*yaml.RNode{plain})
	if err != nil || plain.GetNamespace() != "x" {
		t.Fatalf("Apply: %v, namespace %q", err, plain.GetNamespace())
	}
	got := s.Finish([]Piece{p, {}})
	want := fn.Results{
		{Message: `namespace [a] updated to "x", 1 value(s) changed`, Severity: fn.Info},
		{Message: "all `depends-on` annotations are up-to-date. no `namespace` changed", Severity: fn.Info},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Finish (-want +got):\n%s", diff)
	}
}

// TestStreamSummaries: summaries gathered over pieces that each saw part
// of the package (two namespaces met in opposite order, images and labels
// counted across files) match the whole-list run.
func TestStreamSummaries(t *testing.T) {
	t.Parallel()
	items := `items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: b, namespace: zeta}
  spec:
    template:
      spec:
        containers: [{name: c, image: nginx:1.0}]
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a, namespace: alpha}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: c, namespace: alpha}
  spec:
    template:
      spec:
        containers: [{name: c, image: nginx:1.0}, {name: d, image: redis}]
`
	for name, config := range map[string]string{
		"set-namespace":   "data: {namespace: prod}",
		"set-image":       "data: {name: nginx, newTag: '2.0'}",
		"set-labels":      "data: {app: web}",
		"set-annotations": "data: {team: platform}",
		"search-replace":  "data: {by-value: alpha, put-value: beta}",
		"apply-setters":   "data: {x: y}",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, _ := Lookup(name)
			input := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n" + items +
				"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: fc}\n  " + config + "\n"
			if !checkStream(t, f, input) {
				t.Fatal("did not stream")
			}
		})
	}
}

// TestReplacementsLeaveOutUninvolved: apply-replacements run only on the
// resources a replacement can read or write edits and reports exactly
// what the catalog does on all of them.
func TestReplacementsLeaveOutUninvolved(t *testing.T) {
	t.Parallel()
	items := `items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: settings, namespace: default}
  data: {image: "nginx:1.29", team: web}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web}
  spec:
    template:
      spec:
        containers: [{name: web, image: "nginx:1.25"}] # pinned
- apiVersion: v1
  kind: Service
  metadata: {name: web, annotations: {keep: "me"}} # a comment
  spec: {ports: [{port: 80}]}
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: renamed
    annotations: {internal.config.kubernetes.io/previousNames: "old-settings", internal.config.kubernetes.io/previousKinds: "ConfigMap", internal.config.kubernetes.io/previousNamespaces: "default"}
  data: {image: "x"}
- apiVersion: apps/v1
  kind: StatefulSet
  metadata: {name: db}
  spec:
    template:
      spec:
        containers: [{name: web, image: "redis"}]
`
	configs := map[string]string{
		"by-kind": `replacements:
- source: {kind: ConfigMap, name: settings, fieldPath: data.image}
  targets:
  - select: {kind: Deployment}
    fieldPaths:
    - spec.template.spec.containers.[name=web].image`,
		"kind-pattern": `replacements:
- source: {kind: ConfigMap, name: settings, fieldPath: data.team}
  targets:
  - select: {kind: "Deployment|StatefulSet"}
    fieldPaths: [metadata.labels.team]
    options: {create: true}`,
		"chained": `replacements:
- source: {kind: ConfigMap, name: settings, fieldPath: data.image}
  targets:
  - select: {kind: Service}
    fieldPaths: [metadata.annotations.image]
    options: {create: true}
- source: {kind: Service, name: web, fieldPath: metadata.annotations.image}
  targets:
  - select: {kind: StatefulSet}
    fieldPaths:
    - spec.template.spec.containers.[name=web].image`,
		"previous-name": `replacements:
- source: {kind: ConfigMap, name: old-settings, fieldPath: data.image}
  targets:
  - select: {kind: Deployment}
    fieldPaths:
    - spec.template.spec.containers.[name=web].image`,
		"missing-source": `replacements:
- source: {kind: ConfigMap, name: nowhere, fieldPath: data.image}
  targets:
  - select: {kind: Deployment}
    fieldPaths:
    - spec.template.spec.containers.[name=web].image`,
		"value-source": `replacements:
- sourceValue: "busybox"
  targets:
  - select: {kind: StatefulSet}
    fieldPaths:
    - spec.template.spec.containers.[name=web].image`,
	}
	for name, config := range configs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			input := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n" + items +
				"functionConfig:\n  apiVersion: fn.kpt.dev/v1alpha1\n  kind: ApplyReplacements\n  metadata: {name: r}\n  " +
				strings.ReplaceAll(config, "\n", "\n  ") + "\n"
			whole, part := decode(t, input), decode(t, input)
			if _, _, ok := replacementsInvolve(part.FunctionConfig); !ok && name != "value-source" {
				t.Fatal("replacementsInvolve declined")
			}
			werr := replaceAll(whole, replacements.ApplyReplacements)
			perr := runApplyReplacements(part)
			if (werr == nil) != (perr == nil) || (werr != nil && werr.Error() != perr.Error()) {
				t.Fatalf("errors differ: all %v, involved only %v", werr, perr)
			}
			if diff := cmp.Diff(encodeAll(t, whole.Items), encodeAll(t, part.Items)); diff != "" {
				t.Errorf("items differ (-all +involved only):\n%s", diff)
			}
			if diff := cmp.Diff(whole.Results, part.Results); diff != "" {
				t.Errorf("results differ (-all +involved only):\n%s", diff)
			}
		})
	}
}
