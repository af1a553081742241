package bot

import (
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/fleettest"
)

// pushConfig replaces r's kptbot.yaml on main and delivers the push.
func (fl *fleet) pushConfig(r forge.Repo, cfg string) {
	fl.t.Helper()
	main, err := fl.fake.ReadTree(fl.ctx, r, "main", "")
	if err != nil {
		fl.t.Fatal(err)
	}
	if _, err := fl.fake.PushFiles(fl.ctx, r, "main", main.Commit, main.Commit, map[string][]byte{"kptbot.yaml": []byte(cfg)}, "change kptbot.yaml"); err != nil {
		fl.t.Fatal(err)
	}
	if _, err := fl.bot.Handle(fl.ctx, forge.Event{Forge: forge.GitHub, Kind: forge.EventBranchPushed, Repo: r, Ref: "refs/heads/main", Sender: forge.User{Login: "alice"}}); err != nil {
		fl.t.Fatal(err)
	}
}

func branchNamed(t *testing.T, fl *fleet, r forge.Repo, name string) bool {
	t.Helper()
	brs, err := fl.fake.ListBranches(fl.ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range brs {
		if b.Name == name {
			return true
		}
	}
	return false
}

// A variant removed from kptbot.yaml while its clone change is still open
// (never published): the bot closes that change and deletes its branch, as
// Porch deletes a removed variant's drafts and proposals.
func TestRemovedVariantClosesItsOpenChange(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, 1)
	r := downstream(1)
	fl.tagEvent(1)
	c := fl.openUpdates(r)[0]
	fl.pushConfig(r, "apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: site-1\n")
	if cs := fl.openUpdates(r); len(cs) != 0 {
		t.Fatalf("open update changes after removing the variant = %+v, want none", cs)
	}
	if branchNamed(t, fl, r, c.HeadRef) {
		t.Errorf("branch %s of the closed change is still there", c.HeadRef)
	}
}

// The same with deletionPolicy orphan: the change stays open.
func TestRemovedOrphanVariantKeepsItsOpenChange(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, 1)
	r := downstream(1)
	pv := fleettest.Follower("ns-1") + "  deletionPolicy: orphan\n"
	fl.pushConfig(r, pv)
	if n := len(fl.openUpdates(r)); n != 1 {
		t.Fatalf("%d update changes, want the clone", n)
	}
	fl.pushConfig(r, "apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: site-1\n")
	if n := len(fl.openUpdates(r)); n != 1 {
		t.Errorf("%d update changes after removing an orphan-policy variant, want its change kept", n)
	}
}

// A variant whose downstream package changes: its open change for the old
// package is closed, a change for the new one opened.
func TestMovedVariantClosesTheOldPackagesChange(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, 1)
	r := downstream(1)
	fl.tagEvent(1)
	old := fl.openUpdates(r)[0]
	fl.pushConfig(r, "apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ns-1\nspec:\n  upstream: {repo: acme/blueprints, package: basens}\n  downstream: {package: team-ns2}\n")
	cs := fl.openUpdates(r)
	if len(cs) != 1 || cs[0].Number == old.Number || !strings.Contains(cs[0].Title, "team-ns2") {
		t.Fatalf("update changes after moving the variant = %+v, want one for team-ns2", cs)
	}
	if branchNamed(t, fl, r, old.HeadRef) {
		t.Errorf("branch %s of the old package's change is still there", old.HeadRef)
	}
}

// A PackageVariantSet's CEL variable upstream carries the upstream
// package's labels and annotations (its Kptfile's at the revision the set
// follows), as Porch's upstream package revision does.
func TestSetSeesUpstreamLabelsAndAnnotations(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, 0)
	set := `apiVersion: kptbot.dev/v1alpha1
kind: PackageVariantSet
metadata:
  name: edge-ns
spec:
  upstream: {repo: acme/blueprints, package: basens}
  targets:
    - repositories: [{name: acme/explicit, packageNames: [ns-explicit]}]
      template:
        labelExprs: [{key: tier, valueExpr: "upstream.labels['tier']"}]
        annotationExprs: [{key: owner-team, valueExpr: "upstream.annotations['example.com/team'] + '@' + upstream.name"}]
`
	kf := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: basens\n  labels:\n    tier: gold\n  annotations:\n    example.com/team: platform\n"
	fleettest.Publish(t, fl.fake, 2, map[string][]byte{"kptbot.yaml": []byte(set), "basens/Kptfile": []byte(kf)})
	target := forge.Repo{Forge: forge.GitHub, FullName: "acme/explicit", DefaultBranch: "main"}
	if _, err := fl.bot.Reconcile(fl.ctx, target); err != nil {
		t.Fatal(err)
	}
	cs := fl.openUpdates(target)
	if len(cs) != 1 {
		t.Fatalf("update changes on acme/explicit = %+v", cs)
	}
	snap, err := fl.fake.ReadTree(fl.ctx, target, cs[0].HeadSHA, "ns-explicit")
	if err != nil {
		t.Fatal(err)
	}
	got := string(snap.Files["Kptfile"])
	for _, want := range []string{"tier: gold", "owner-team: platform@basens"} {
		if !strings.Contains(got, want) {
			t.Errorf("the generated variant's Kptfile lacks %q:\n%s", want, got)
		}
	}
}
