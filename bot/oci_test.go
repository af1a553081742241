package bot

import (
	"context"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/fetch/oci"
	"github.com/kptbot/kptbot/fetch/sources"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgetest"
	"github.com/kptbot/kptbot/internal/ocitest"
)

// TestVariantFollowsOCIUpstream: a PackageVariant whose upstream is an OCI
// artifact gets a clone change pinned to the manifest digest, and the same
// change moves when a new tag appears (found at resync).
func TestVariantFollowsOCIUpstream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := "oci://" + ocitest.MemRegistry(t) + "/blueprints"
	src, err := sources.New(sources.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	pkg := func(n string) map[string][]byte {
		return map[string][]byte{"Kptfile": []byte(ocitest.Kptfile("basens")), "ns.yaml": []byte(basensNS(n))}
	}
	d1, err := src.OCI.Push(ctx, repo, "/basens", "v1", pkg("v1"), oci.PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fake := forgetest.New()
	site := forge.Repo{Forge: forge.GitHub, FullName: "acme/site-oci", DefaultBranch: "main"}
	fake.Seed(site, "main", map[string][]byte{"kptbot.yaml": []byte("apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ns\nspec:\n  upstream: {repo: \"" + repo + "\", package: basens}\n  downstream: {package: team-ns}\n")})
	b, err := New(Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(fake)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reconcile(ctx, site); err != nil {
		t.Fatal(err)
	}
	cs, _ := fake.ListOpenChanges(ctx, site)
	if len(cs) != 1 {
		t.Fatalf("open changes = %+v, want the clone change", cs)
	}
	first := cs[0]
	m, _ := ParseMarker(first.Body)
	snap, _ := fake.ReadTree(ctx, site, first.HeadSHA, "team-ns")
	if m.UpstreamLock != d1 || !strings.Contains(string(snap.Files["ns.yaml"]), "owner: v1") {
		t.Fatalf("clone change: lock %q (want %s), files %v", m.UpstreamLock, d1, snap.Files)
	}
	d2, err := src.OCI.Push(ctx, repo, "/basens", "v2", pkg("v2"), oci.PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reconcile(ctx, site); err != nil {
		t.Fatal(err)
	}
	cs, _ = fake.ListOpenChanges(ctx, site)
	m, _ = ParseMarker(cs[0].Body)
	snap, _ = fake.ReadTree(ctx, site, cs[0].HeadSHA, "team-ns")
	if len(cs) != 1 || cs[0].Number != first.Number || m.UpstreamLock != d2 || !strings.Contains(string(snap.Files["ns.yaml"]), "owner: v2") {
		t.Fatalf("after v2: changes %+v, lock %q (want %s)", cs, m.UpstreamLock, d2)
	}
}
