package fnresults_test

import (
	"bytes"
	"encoding/json"
	"testing"

	fnresult "github.com/kptdev/kpt/pkg/api/fnresult/v1"
	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/fnresults"
	"github.com/kptbot/kptbot/engine/internal/kptref"
)

// functionResults is what functions write in a ResourceList's results:
// every field, values of several kinds, and the layouts (block scalars,
// quoting, empty values) whose encoding depends on the Go types.
const functionResults = `
- message: "replaced 3 fields"
  severity: info
- message: |
    line one

      indented line
  severity: error
  resourceRef: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: prod}
  field: {path: spec.replicas, currentValue: 3, proposedValue: {a: [1, "2"], b: null}}
  file: {path: deploy/web.yaml, index: 2}
  tags: {rule: replicas, "x:y": "true"}
- message: only a field
  severity: warning
  field: {path: "metadata.labels['app']", currentValue: "007", proposedValue: true}
  file: {path: a.yaml}
- message: ""
  severity: custom
  resourceRef: {kind: ConfigMap}
  field: {path: ""}
  tags: {}
- {}
`

// encode is the encoding kpt's --results-dir uses.
func encode(t *testing.T, v interface{}) string {
	t.Helper()
	var buf bytes.Buffer
	e := yaml.NewEncoderWithOptions(&buf, &yaml.EncoderOptions{SeqIndent: yaml.WideSequenceStyle})
	if err := e.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestEncodesAsKpt: the same results decoded into kpt's types and into
// kptbot's are written byte for byte the same, in YAML (results.yaml) and,
// for the items, in JSON.
func TestEncodesAsKpt(t *testing.T) {
	var theirs framework.Results
	if err := yaml.Unmarshal([]byte(functionResults), &theirs); err != nil {
		t.Fatal(err)
	}
	var ours []*fnresults.Item
	if err := yaml.Unmarshal([]byte(functionResults), &ours); err != nil {
		t.Fatal(err)
	}
	if len(ours) != 5 {
		t.Fatalf("decoded %d items, want 5", len(ours))
	}
	tj, err := json.Marshal(theirs)
	if err != nil {
		t.Fatal(err)
	}
	oj, err := json.Marshal(ours)
	if err != nil {
		t.Fatal(err)
	}
	if string(tj) != string(oj) {
		t.Errorf("JSON differs:\nkpt:     %s\nkptbot:  %s", tj, oj)
	}

	kl := fnresult.NewResultList()
	kl.ExitCode = 1
	kl.Items = append(kl.Items,
		fnresult.Result{Image: "ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4", Results: theirs},
		fnresult.Result{ExecPath: "./fn --flag", Stderr: "warn\n  boom\n", ExitCode: 2},
		fnresult.Result{})
	ol := fnresults.NewList()
	ol.ExitCode = 1
	ol.Items = append(ol.Items,
		fnresults.Result{Image: "ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4", Results: ours},
		fnresults.Result{ExecPath: "./fn --flag", Stderr: "warn\n  boom\n", ExitCode: 2},
		fnresults.Result{})
	want, got := encode(t, kl), encode(t, ol)
	if got != want {
		t.Errorf("results.yaml differs:\n--- kpt\n%s\n--- kptbot\n%s", want, got)
	}
	if got := encode(t, kptref.FromKpt(kl)); got != want {
		t.Errorf("kptref.FromKpt's copy is written differently:\n--- kpt\n%s\n--- copy\n%s", want, got)
	}
	if want, got := encode(t, fnresult.NewResultList()), encode(t, fnresults.NewList()); got != want {
		t.Errorf("empty list differs:\n--- kpt\n%s\n--- kptbot\n%s", want, got)
	}
}

// TestStringAsKyaml: an item prints as kyaml's framework.Result does (fn
// eval's [Results] line).
func TestStringAsKyaml(t *testing.T) {
	var theirs framework.Results
	if err := yaml.Unmarshal([]byte(functionResults), &theirs); err != nil {
		t.Fatal(err)
	}
	var ours []*fnresults.Item
	if err := yaml.Unmarshal([]byte(functionResults), &ours); err != nil {
		t.Fatal(err)
	}
	extra := []framework.Result{
		{Message: "m", ResourceRef: &yaml.ResourceIdentifier{}},
		{Message: "m", ResourceRef: &yaml.ResourceIdentifier{NameMeta: yaml.NameMeta{Name: "n"}}, Field: &framework.Field{}},
	}
	for i := range extra {
		theirs = append(theirs, &extra[i])
	}
	ours = append(ours,
		&fnresults.Item{Message: "m", ResourceRef: &yaml.ResourceIdentifier{}},
		&fnresults.Item{Message: "m", ResourceRef: &yaml.ResourceIdentifier{NameMeta: yaml.NameMeta{Name: "n"}}, Field: &fnresults.Field{}})
	for i := range theirs {
		if want, got := theirs[i].String(), ours[i].String(); got != want {
			t.Errorf("item %d: String() = %q, kyaml's %q", i, got, want)
		}
	}
}

// TestFromSDK: the SDK's results (the built-ins') are written as the same
// results read back from their YAML, nil ones left out.
func TestFromSDK(t *testing.T) {
	rs := sdk.Results{
		{Message: "a", Severity: sdk.Warning,
			ResourceRef: &sdk.ResourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: "c", Namespace: "ns"},
			Field:       &sdk.Field{Path: "data.x", CurrentValue: "1", ProposedValue: 2},
			File:        &sdk.File{Path: "c.yaml", Index: 1},
			Tags:        map[string]string{"k": "v"}},
		nil,
		{Message: "b"},
	}
	b, err := yaml.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	var want []*fnresults.Item
	if err := yaml.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	want = append(want[:1], want[2:]...)
	if got, w := encode(t, fnresults.FromSDK(rs)), encode(t, want); got != w {
		t.Errorf("FromSDK:\n%s\nwant:\n%s", got, w)
	}
	if got := fnresults.FromSDK(nil); got != nil {
		t.Errorf("FromSDK(nil) = %v, want nil", got)
	}
}
