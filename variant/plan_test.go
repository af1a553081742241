package variant

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/porch"
)

// upstreamFake serves revisions of one package (basens of
// acme/blueprints) from memory, as a forge or git remote would.
type upstreamFake struct {
	latest    string
	revisions map[string]map[string][]byte
}

func (u upstreamFake) Fetch(_ context.Context, repo, dir, version string) (map[string][]byte, fetch.Resolved, error) {
	for rev, files := range u.revisions {
		// a revision by name, or by the commit a lock records
		if dir == "/basens" && (version == rev || version == strings.Repeat(rev[1:], 40)) {
			return files, fetch.Resolved{Ref: rev, Commit: strings.Repeat(rev[1:], 40)}, nil
		}
	}
	return nil, fetch.Resolved{}, fmt.Errorf("%s: no %s at %s", repo, dir, version)
}

func (u upstreamFake) Latest(_ context.Context, up *config.Upstream) (string, error) {
	if up.Revision != "" && up.Revision != config.DefaultRevision {
		return up.Revision, nil
	}
	return u.latest, nil
}

func basens(cpu string) map[string][]byte {
	return map[string][]byte{
		"Kptfile":            []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: basens\n  labels:\n    tier: base\n"),
		"resourcequota.yaml": []byte("apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: default\nspec:\n  hard:\n    cpu: \"" + cpu + "\"\n"),
	}
}

func teamA(mut func(*config.PackageVariantSpec)) config.PackageVariant {
	pv := config.PackageVariant{Metadata: config.ObjectMeta{Name: "team-a"}, Spec: config.PackageVariantSpec{
		Upstream:       &config.Upstream{Repo: "acme/blueprints", Package: "basens"},
		Downstream:     &config.Downstream{Package: "team-a"},
		Labels:         map[string]string{"team": "a"},
		DeletionPolicy: "delete",
	}}
	if mut != nil {
		mut(&pv.Spec)
	}
	return pv
}

// TestMake is the planner's table: what one variant needs, from the
// published package and the upstream, with the task Porch records.
func TestMake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := upstreamFake{latest: "v1", revisions: map[string]map[string][]byte{"v1": basens("40"), "v2": basens("50")}}
	cloned, err := Make(ctx, up, Input{Variant: teamA(nil)})
	if err != nil {
		t.Fatal(err)
	}
	published := cloned.Tree
	edited := kptpkg.Tree{}
	for p, b := range published {
		edited[p] = b
	}
	edited["resourcequota.yaml"] = []byte(strings.Replace(string(published["resourcequota.yaml"]), `cpu: "40"`, `cpu: "45"`, 1))
	othersKf, err := kptpkg.SetKptfileAnnotation(published[kptpkg.KptfileName], porch.OwnerAnnotation, "someone-else")
	if err != nil {
		t.Fatal(err)
	}
	others := kptpkg.Tree{kptpkg.KptfileName: othersKf, "resourcequota.yaml": published["resourcequota.yaml"]}
	v2 := upstreamFake{latest: "v2", revisions: up.revisions}

	for _, tc := range []struct {
		name      string
		up        upstreamFake
		in        Input
		kind      Kind
		task      porch.TaskType
		why       string
		conflicts int
	}{
		{"clone", up, Input{Variant: teamA(nil)}, Clone, porch.TaskTypeClone, "clone acme/blueprints/basens@v1", 0},
		{"up to date", up, Input{Variant: teamA(nil), Published: published, LocalRevision: "team-a/v1"}, None, porch.TaskTypeEdit, "team-a/v1 is up to date with acme/blueprints/basens@v1", 0},
		{"new upstream revision", v2, Input{Variant: teamA(nil), Published: published, LocalRevision: "team-a/v1"}, Upgrade, porch.TaskTypeUpgrade, "upgrade to acme/blueprints/basens@v2", 0},
		{"local edit upstream also changed", v2, Input{Variant: teamA(nil), Published: edited, LocalRevision: "team-a/v2"}, Upgrade, porch.TaskTypeUpgrade, "upgrade to acme/blueprints/basens@v2", 1},
		{"mutations changed", up, Input{Variant: teamA(func(s *config.PackageVariantSpec) { s.Labels["team"] = "a2" }), Published: published}, Edit, porch.TaskTypeEdit, "apply the variant's mutations", 0},
		{"pinned revision overrides latest", v2, Input{Variant: teamA(nil), Published: published, Revision: "v1"}, None, porch.TaskTypeEdit, "is up to date", 0},
		{"paused", up, Input{Variant: teamA(func(s *config.PackageVariantSpec) { s.Paused = true })}, Skip, porch.TaskTypeNone, "paused", 0},
		{"owned by another, adoptNone", up, Input{Variant: teamA(nil), Published: others, LocalRevision: "team-a/v3"}, Skip, porch.TaskTypeNone, `team-a/v3 exists and is not owned by this variant (owner "someone-else")`, 0},
		{"owned by another, adoptExisting", up, Input{Variant: teamA(func(s *config.PackageVariantSpec) { s.AdoptionPolicy = "adoptExisting" }), Published: others}, Edit, porch.TaskTypeEdit, "apply the variant's mutations", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Make(ctx, tc.up, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if p.Kind != tc.kind || p.Task.Type != tc.task || !strings.Contains(p.Why, tc.why) || len(p.Conflicts) != tc.conflicts {
				t.Fatalf("Make = kind %s, task %s, why %q, %d conflicts; want %s, %s, %q, %d", p.Kind, p.Task.Type, p.Why, len(p.Conflicts), tc.kind, tc.task, tc.why, tc.conflicts)
			}
			if !p.Changes() {
				return
			}
			if Owner(p.Tree) != "team-a" || DeletionPolicy(p.Tree) != "delete" {
				t.Errorf("planned package not marked as team-a's: owner %q, policy %q", Owner(p.Tree), DeletionPolicy(p.Tree))
			}
			if tc.kind == Upgrade {
				u := p.Task.Upgrade
				if u.OldUpstream.Name != "acme/blueprints/basens@v1" || u.NewUpstream.Name != "acme/blueprints/basens@v2" || u.LocalPackageRevisionRef.Name != tc.in.LocalRevision || p.FromRevision != "v1" || p.Lock != strings.Repeat("2", 40) {
					t.Errorf("upgrade task %s, from %q, lock %q", p.Task.JSON(), p.FromRevision, p.Lock)
				}
			}
			if tc.conflicts > 0 {
				if c := p.Conflicts[0]; c.Field != "spec.hard.cpu" || c.Local != "45" || c.Upstream != "50" {
					t.Errorf("conflict = %+v", c)
				}
			}
		})
	}
}
