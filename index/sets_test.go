package index

import (
	"slices"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
)

func parsed(t *testing.T, yaml string) *config.File {
	t.Helper()
	f, err := config.Parse("kptbot.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return config.Defaults(f)
}

const fleetSet = `apiVersion: kptbot.dev/v1alpha1
kind: PackageVariantSet
metadata: {name: edge-ns}
spec:
  upstream: {repo: acme/blueprints, package: basens}
  targets:
    - repositorySelector: {matchLabels: {kptbot.dev/topic: edge}}
`

func TestExpandSets(t *testing.T) {
	t.Parallel()
	repo := func(name string, topics ...string) forge.Repo {
		return forge.Repo{Forge: forge.GitHub, FullName: name, Topics: topics}
	}
	accepting := "apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata: {name: r}\nspec:\n  acceptVariantsFrom: [acme/fleet]\n"
	refusing := "apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata: {name: r}\nspec: {}\n"
	tests := []struct {
		name string
		// target's topics and kptbot.yaml ("": none)
		topics []string
		cfg    string
		// wantGen: a variant is generated for acme/site; wantProblem: the
		// set's repository is told the target refuses it.
		wantGen, wantProblem bool
	}{
		{name: "selected and accepting", topics: []string{"edge"}, cfg: accepting, wantGen: true},
		{name: "selected without kptbot.yaml", topics: []string{"core", "edge"}, wantGen: true, wantProblem: true},
		{name: "selected and refusing", topics: []string{"edge"}, cfg: refusing, wantGen: true, wantProblem: true},
		{name: "not selected", topics: []string{"core"}, cfg: accepting},
		{name: "no topics", cfg: accepting},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			site := Entry{Repo: repo("acme/site", tc.topics...)}
			if tc.cfg != "" {
				site.Cfg = parsed(t, tc.cfg)
			}
			repos := []Entry{{Repo: repo("acme/fleet"), Cfg: parsed(t, fleetSet)}, site}
			gen, probs := expandSets(repos, nil)
			got := gen[genKey(forge.GitHub, "ACME/Site")]
			if (len(got) > 0) != tc.wantGen {
				t.Fatalf("generated for acme/site = %+v, want some: %v", got, tc.wantGen)
			}
			if tc.wantGen && (got[0].from.FullName != "acme/fleet" || got[0].pv.Spec.Downstream.Package != "basens") {
				t.Errorf("generated = %+v, want basens from acme/fleet", got[0])
			}
			refused := slices.ContainsFunc(probs["acme/fleet"], func(p Problem) bool {
				return strings.Contains(p.Message, "targets acme/site, which does not accept variants from acme/fleet")
			})
			if refused != tc.wantProblem {
				t.Errorf("problems = %+v, want the refusal: %v", probs, tc.wantProblem)
			}
		})
	}
}
