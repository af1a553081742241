package fieldspec

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestApply checks kustomize's field spec semantics as Apply walks them:
// "\/" escapes a slash, lists are entered element by element, missing maps
// are created only where the spec says so, and a spec applies only to the
// kinds it selects.
func TestApply(t *testing.T) {
	t.Parallel()
	const deploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  annotations:
    a/b: x
spec:
  template:
    spec:
      containers:
      - name: one
      - name: two
`
	cases := []struct {
		name string
		fs   types.FieldSpec
		want []string
	}{
		{"escaped slash", types.FieldSpec{Path: `metadata/annotations/a\/b`}, []string{"x"}},
		{"list entered", types.FieldSpec{Path: "spec/template/spec/containers[]/name"}, []string{"one", "two"}},
		{"missing, not created", types.FieldSpec{Path: "metadata/labels"}, nil},
		{"missing, created", types.FieldSpec{Path: "metadata/labels", CreateIfNotPresent: true}, []string{""}},
		{"other kind", types.FieldSpec{Gvk: resid.Gvk{Kind: "Service"}, Path: "metadata/name"}, nil},
		{"this kind", types.FieldSpec{Gvk: resid.Gvk{Group: "apps", Kind: "Deployment"}, Path: "metadata/name"}, []string{"d"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			it := yaml.MustParse(deploy)
			var got []string
			err := Apply([]*yaml.RNode{it}, types.FsSlice{tc.fs}, yaml.MappingNode, nil, func(n *yaml.Node) error {
				got = append(got, n.Value)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") || len(got) != len(tc.want) {
				t.Errorf("visited %q, want %q", got, tc.want)
			}
			created := it.Field("metadata").Value.Field("labels") != nil
			if created != (tc.fs.CreateIfNotPresent && tc.fs.Path == "metadata/labels") {
				t.Errorf("metadata.labels created = %v", created)
			}
		})
	}
}

// TestDecode checks a function config's extra field specs are read and a
// spec without a path is refused naming the field and index.
func TestDecode(t *testing.T) {
	t.Parallel()
	cfg := yaml.MustParse("additionalLabelFields:\n- kind: Foo\n  path: spec/x\n  create: true\n")
	fs, err := Decode(cfg, "additionalLabelFields")
	if err != nil || len(fs) != 1 || fs[0].Kind != "Foo" || fs[0].Path != "spec/x" || !fs[0].CreateIfNotPresent {
		t.Fatalf("Decode = %+v, %v", fs, err)
	}
	_, err = Decode(yaml.MustParse("additionalLabelFields:\n- kind: Foo\n"), "additionalLabelFields")
	if err == nil || !strings.Contains(err.Error(), "additionalLabelFields[0]: path is required") {
		t.Fatalf("Decode without path: %v", err)
	}
}
