// Package fleettest seeds a fake forge with a fleet: an upstream
// repository publishing the package basens and downstream repositories
// following it. The bot's, the fan-out's and the server's tests and
// benchmarks share it.
package fleettest

import (
	"context"
	"fmt"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgetest"
)

// BasensKptfile is the upstream package's Kptfile.
const BasensKptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: basens
info:
  description: a namespace
`

// BasensNS is the package's Namespace, annotated with owner (what a new
// revision changes).
func BasensNS(owner string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: example
  annotations:
    owner: %s
`, owner)
}

// BasensQuota is a resource a later revision adds.
const BasensQuota = `apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota
  namespace: example
spec:
  hard:
    pods: "10"
`

// Upstream is the repository publishing basens.
var Upstream = forge.Repo{Forge: forge.GitHub, FullName: "acme/blueprints", DefaultBranch: "main"}

// Downstream is the i-th follower (1-based).
func Downstream(i int) forge.Repo {
	return forge.Repo{Forge: forge.GitHub, FullName: fmt.Sprintf("acme/site-%d", i), DefaultBranch: "main"}
}

// Seed puts the upstream (basens/v1 tagged, and a PackageVariantSet
// targeting acme/explicit and the repositories with the edge topic) and
// downstreams followers on fake; alice and dana may write to every
// follower.
func Seed(t testing.TB, fake *forgetest.Fake, downstreams int) {
	t.Helper()
	ctx := context.Background()
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
	sha := fake.Seed(Upstream, "main", map[string][]byte{"basens/Kptfile": []byte(BasensKptfile), "basens/ns.yaml": []byte(BasensNS("v1")), "kptbot.yaml": []byte(set)})
	if err := fake.CreateTag(ctx, Upstream, "basens/v1", sha, "v1"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= downstreams; i++ {
		r := Downstream(i)
		pv := Follower(fmt.Sprintf("ns-%d", i)) + fmt.Sprintf("  labels: {site: site-%d}\n", i)
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
}

// Follower is the kptbot.yaml of a repository following basens into its
// package team-ns, as the PackageVariant named name.
func Follower(name string) string {
	return "apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: " + name +
		"\nspec:\n  upstream: {repo: acme/blueprints, package: basens}\n  downstream: {package: team-ns}\n"
}

// Publish commits revision n of basens with files and tags it basens/vn.
func Publish(t testing.TB, fake *forgetest.Fake, n int, files map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	branches, _ := fake.ListBranches(ctx, Upstream)
	var tip string
	for _, b := range branches {
		if b.Name == "main" {
			tip = b.SHA
		}
	}
	sha, err := fake.PushFiles(ctx, Upstream, "main", tip, tip, files, fmt.Sprintf("basens: revision %d", n))
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.CreateTag(ctx, Upstream, fmt.Sprintf("basens/v%d", n), sha, ""); err != nil {
		t.Fatal(err)
	}
}
