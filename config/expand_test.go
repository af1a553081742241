package config

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpandDesignExample(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/design-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("kptbot.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	pvs, err := Expand(f.Sets[0], ExpandInput{
		Upstream: Object{Name: "blueprints-basens-v3"},
		Repositories: []Object{
			{Name: "edge-2", Labels: map[string]string{"kptbot.dev/topic": "edge"}},
			{Name: "core-1", Labels: map[string]string{"kptbot.dev/topic": "core"}},
			{Name: "edge-3", Labels: map[string]string{"kptbot.dev/topic": "edge", "region": "eu"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, pv := range pvs {
		got = append(got, pv.Metadata.Name+" "+pv.Spec.Downstream.Repo+"/"+pv.Spec.Downstream.Package+" site="+pv.Spec.Labels["site"])
	}
	want := []string{
		"edge-namespaces-org-edge-1-ns-a org/edge-1/ns-a site=",
		"edge-namespaces-org-edge-1-ns-b org/edge-1/ns-b site=",
		"edge-namespaces-edge-2-edge-2-ns edge-2/edge-2-ns site=edge-2",
		"edge-namespaces-edge-3-edge-3-ns edge-3/edge-3-ns site=edge-3",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("expanded variants (-want +got):\n%s", diff)
	}
	if pvs[0].Spec.Upstream.Package != "basens" || pvs[0].Spec.Upstream.Repo != "org/blueprints" {
		t.Errorf("upstream = %+v", pvs[0].Spec.Upstream)
	}
}

func TestExpandTemplate(t *testing.T) {
	t.Parallel()
	set := PackageVariantSet{
		Metadata: ObjectMeta{Name: "s"},
		Spec: PackageVariantSetSpec{
			Upstream: &Upstream{Repo: "org/bp", Package: "app"},
			Targets: []Target{{
				RepositorySelector: &LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "env", Operator: "In", Values: []string{"prod"}}}},
				Template: &PackageVariantTemplate{
					DownstreamExprs: &DownstreamExprs{PackageExpr: "packageDefault + '-' + target.labels['region']"},
					AnnotationExprs: []MapExpr{{KeyExpr: "'owner/' + repository.name", Value: "platform"}},
					PackageContext: &PackageContextTemplate{
						DataExprs:      []MapExpr{{Key: "region", ValueExpr: "repository.labels['region']"}},
						RemoveKeyExprs: []string{"'old-' + repoDefault"},
					},
					Injectors: []InjectionSelectorTemplate{{Kind: "ConfigMap", NameExpr: "repoDefault + '-endpoints'"}},
					Pipeline:  &PipelineTemplate{Mutators: []FunctionTemplate{{ConfigMapExprs: []MapExpr{{Key: "namespace", ValueExpr: "upstream.name"}}}}},
				},
			}},
		},
	}
	set.Spec.Targets[0].Template.Pipeline.Mutators[0].Image = "set-namespace:v0.4"
	pvs, err := Expand(set, ExpandInput{
		Upstream:     Object{Name: "app-v2"},
		Repositories: []Object{{Name: "r1", Labels: map[string]string{"env": "prod", "region": "eu"}}, {Name: "r2", Labels: map[string]string{"env": "dev"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pvs) != 1 {
		t.Fatalf("got %d variants, want 1 (r1 only)", len(pvs))
	}
	s := pvs[0].Spec
	checks := map[string][2]string{
		"package":    {s.Downstream.Package, "app-eu"},
		"annotation": {s.Annotations["owner/r1"], "platform"},
		"context":    {s.PackageContext.Data["region"], "eu"},
		"remove":     {strings.Join(s.PackageContext.RemoveKeys, ","), "old-r1"},
		"injector":   {s.Injectors[0].Name, "r1-endpoints"},
		"configMap":  {s.Pipeline.Mutators[0].ConfigMap["namespace"], "app-v2"},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
}

func TestExpandErrors(t *testing.T) {
	t.Parallel()
	base := func(tp *PackageVariantTemplate) PackageVariantSet {
		return PackageVariantSet{Metadata: ObjectMeta{Name: "s"}, Spec: PackageVariantSetSpec{
			Upstream: &Upstream{Repo: "r", Package: "p"},
			Targets:  []Target{{Repositories: []RepositoryTarget{{Name: "a"}}, Template: tp}},
		}}
	}
	tests := []struct {
		name string
		tp   *PackageVariantTemplate
		want string
	}{
		{"syntax", &PackageVariantTemplate{LabelExprs: []MapExpr{{Key: "k", ValueExpr: "repoDefault +"}}}, "spec.targets[0]: template.labelExprs[0].valueExpr"},
		{"not a string", &PackageVariantTemplate{Downstream: &DownstreamTemplate{PackageExpr: "1 + 2"}}, "template.downstream.packageExpr"},
		{"unknown variable", &PackageVariantTemplate{Downstream: &DownstreamTemplate{PackageExpr: "cluster.name"}}, "undeclared reference to 'cluster'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Expand(base(tc.tp), ExpandInput{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestVariantName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 80)
	got := VariantName(long)
	if len(got) != 63 || !strings.HasPrefix(got, strings.Repeat("x", 54)+"-") {
		t.Errorf("VariantName(80 x) = %q", got)
	}
	if VariantName("short") != "short" {
		t.Error("short names must stay as they are")
	}
}
