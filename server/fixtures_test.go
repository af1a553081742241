package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgetest"
)

// The server's tests run the whole bot behind the webhook server: these
// are the packages and repositories they seed.

const kptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: ns
pipeline:
  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1
      configMap:
        namespace: team-a
`

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: team-a
data:
  replicas: "1"
`

const basensKptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: basens
info:
  description: a namespace
`

func basensNS(owner string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: example
  annotations:
    owner: %s
`, owner)
}

var blueprints = forge.Repo{Forge: forge.GitHub, FullName: "acme/blueprints", DefaultBranch: "main"}

// fleet is an upstream repository and downstream repositories following
// its package basens, on the fake forge.
type fleet struct {
	t    testing.TB
	fake *forgetest.Fake
	bot  *bot.Bot
	ctx  context.Context
}

func newFleet(t testing.TB, downstreams int) *fleet {
	t.Helper()
	fake := forgetest.New()
	fl := &fleet{t: t, fake: fake, ctx: context.Background()}
	set := `apiVersion: kptbot.dev/v1alpha1
kind: PackageVariantSet
metadata:
  name: edge-ns
spec:
  upstream: {repo: acme/blueprints, package: basens}
  targets:
    - repositories:
        - {name: acme/explicit, packageNames: [ns-explicit]}
    - repositorySelector: {matchLabels: {kptbot.dev/topic: edge}}
      template:
        downstream: {packageExpr: "'ns-' + repository.labels['kptbot.dev/topic']"}
`
	sha := fake.Seed(blueprints, "main", map[string][]byte{"basens/Kptfile": []byte(basensKptfile), "basens/ns.yaml": []byte(basensNS("v1")), "kptbot.yaml": []byte(set)})
	if err := fake.CreateTag(fl.ctx, blueprints, "basens/v1", sha, "v1"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= downstreams; i++ {
		r := downstream(i)
		pv := fmt.Sprintf(`apiVersion: kptbot.dev/v1alpha1
kind: PackageVariant
metadata:
  name: ns-%d
spec:
  upstream: {repo: acme/blueprints, package: basens}
  downstream: {package: team-ns}
  labels: {site: site-%d}
`, i, i)
		fake.Seed(r, "main", map[string][]byte{"kptbot.yaml": []byte(pv), "README.md": []byte("site\n")})
		for _, u := range []string{"alice", "dana"} {
			fake.Perms[r.FullName+":"+u] = forge.PermissionWrite
		}
	}
	// The set's targets consent, in their own kptbot.yaml, to variants
	// from the fleet repository.
	accept := []byte("apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata: {name: target}\nspec:\n  acceptVariantsFrom: [acme/blueprints]\n")
	fake.Seed(forge.Repo{FullName: "acme/explicit"}, "main", map[string][]byte{"README.md": []byte("x\n"), "kptbot.yaml": accept})
	fake.Seed(forge.Repo{FullName: "acme/edge-topic"}, "main", map[string][]byte{"README.md": []byte("x\n"), "kptbot.yaml": accept})
	fake.SetTopics(forge.Repo{FullName: "acme/edge-topic"}, "edge")
	b, err := bot.New(bot.Options{Forges: map[string]forge.Forge{forge.GitHub: fake}, Name: "kptbot", Login: "kptbot[bot]"})
	if err != nil {
		t.Fatal(err)
	}
	fl.bot = b
	return fl
}

func downstream(i int) forge.Repo {
	return forge.Repo{Forge: forge.GitHub, FullName: fmt.Sprintf("acme/site-%d", i), DefaultBranch: "main"}
}
