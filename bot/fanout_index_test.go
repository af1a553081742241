package bot

import (
	"context"
	"fmt"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgetest"
	"github.com/kptbot/kptbot/internal/fleettest"
)

var (
	blueprints = fleettest.Upstream
	downstream = fleettest.Downstream
	basensNS   = fleettest.BasensNS
)

// fleet is fleettest's fleet on the fake forge with a bot in front.
type fleet struct {
	t    testing.TB
	fake *forgetest.Fake
	bot  *Bot
	ctx  context.Context
}

func newFleet(t testing.TB, downstreams int) *fleet {
	t.Helper()
	fake := forgetest.New()
	fleettest.Seed(t, fake, downstreams)
	b, err := New(Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(fake)}, Name: "kptbot", Login: "kptbot[bot]",
		NewFanOut: func(b *Bot) (FanOuter, error) { return inlineFanOut{b}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return &fleet{t: t, fake: fake, bot: b, ctx: context.Background()}
}

// inlineFanOut stands in for package fanout (which imports this one):
// each follower brought up to date in turn.
type inlineFanOut struct{ b *Bot }

func (f inlineFanOut) FanOut(ctx context.Context, upstream forge.Repo, pkg string) (Outcome, []VariantAction, error) {
	var out Outcome
	var all []VariantAction
	rs, err := f.b.Followers(ctx, upstream, pkg)
	if err != nil {
		return out, nil, err
	}
	for _, r := range rs {
		o, acts, err := f.b.UpdateFollower(ctx, upstream, pkg, r)
		if err != nil {
			return out, all, err
		}
		out.Add(o)
		all = append(all, acts...)
	}
	return out, all, nil
}

func (fl *fleet) tagEvent(n int) Outcome {
	fl.t.Helper()
	out, err := fl.bot.Handle(fl.ctx, forge.Event{Forge: forge.GitHub, Kind: forge.EventTagPushed, Repo: blueprints, Ref: fmt.Sprintf("refs/tags/basens/v%d", n), Sender: forge.User{Login: "alice"}})
	if err != nil {
		fl.t.Fatalf("tag event: %v", err)
	}
	return out
}

// openUpdates are r's open changes the bot opened for a variant.
func (fl *fleet) openUpdates(r forge.Repo) []forge.Change {
	fl.t.Helper()
	cs, err := fl.fake.ListOpenChanges(fl.ctx, r)
	if err != nil {
		fl.t.Fatal(err)
	}
	var out []forge.Change
	for _, c := range cs {
		if m, ok := ParseMarker(c.Body); ok && m.Variant != "" {
			out = append(out, c)
		}
	}
	return out
}

// TestFollowerIndexKeptPerRepository: a push to a default branch that
// adds or drops a variant, an installation adding or removing a
// repository, a repository renamed, change the followers of the upstream at once, without a
// full rebuild (no repository listing, no re-read of every other
// repository's kptbot.yaml).
func TestFollowerIndexKeptPerRepository(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, 20)
	if err := fl.bot.RefreshIndex(fl.ctx); err != nil {
		t.Fatal(err)
	}
	follows := func(name string) bool {
		t.Helper()
		rs, err := fl.bot.followers(fl.ctx, blueprints, "basens")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.FullName == name {
				return true
			}
		}
		return false
	}
	lists, reads := fl.fake.Calls("ListRepos"), fl.fake.Calls("ReadFile")

	// A new repository starts following (its first push).
	newcomer := forge.Repo{Forge: forge.GitHub, FullName: "acme/site-new", DefaultBranch: "main"}
	fl.fake.Seed(newcomer, "main", map[string][]byte{"kptbot.yaml": []byte(fleettest.Follower("ns-new"))})
	if follows(newcomer.FullName) {
		t.Fatal("followed before anything said so")
	}
	push := func(r forge.Repo) {
		t.Helper()
		if _, err := fl.bot.Handle(fl.ctx, forge.Event{Forge: forge.GitHub, Kind: forge.EventBranchPushed, Repo: r, Ref: "refs/heads/main", Sender: forge.User{Login: "alice"}}); err != nil {
			t.Fatal(err)
		}
	}
	push(newcomer)
	if !follows(newcomer.FullName) {
		t.Error("a pushed kptbot.yaml's variant is not among the followers")
	}
	// site-3 drops its variant.
	site3 := downstream(3)
	main, _ := fl.fake.ReadTree(fl.ctx, site3, "main", "")
	if _, err := fl.fake.PushFiles(fl.ctx, site3, "main", main.Commit, main.Commit, map[string][]byte{"kptbot.yaml": []byte("apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: site-3\n")}, "drop"); err != nil {
		t.Fatal(err)
	}
	push(site3)
	if follows(site3.FullName) {
		t.Error("a dropped variant still follows")
	}
	// An installation removes site-4, then adds it back.
	inst := func(kind forge.EventKind, r forge.Repo) {
		t.Helper()
		if _, err := fl.bot.Handle(fl.ctx, forge.Event{Forge: forge.GitHub, Kind: kind, Repos: []forge.Repo{r}, Sender: forge.User{Login: "alice"}}); err != nil {
			t.Fatal(err)
		}
	}
	inst(forge.EventInstallationRemoved, downstream(4))
	if follows(downstream(4).FullName) {
		t.Error("a repository the installation removed still follows")
	}
	inst(forge.EventInstallationAdded, downstream(4))
	if !follows(downstream(4).FullName) {
		t.Error("a repository the installation added back does not follow")
	}
	// site-5 is renamed (the fake forge keeps its history under the new
	// name): its variant follows under the new name, the old name gets
	// nothing, and the tag fans out to the new name.
	site5, renamed := downstream(5), forge.Repo{Forge: forge.GitHub, FullName: "acme/site-5-renamed", DefaultBranch: "main"}
	old, _ := fl.fake.ReadTree(fl.ctx, site5, "main", "")
	fl.fake.Seed(renamed, "main", old.Files)
	if _, err := fl.bot.Handle(fl.ctx, forge.Event{Forge: forge.GitHub, Kind: forge.EventRepoRenamed, Repo: renamed, From: site5.FullName, Sender: forge.User{Login: "alice"}}); err != nil {
		t.Fatal(err)
	}
	if follows(site5.FullName) || !follows(renamed.FullName) {
		t.Errorf("after the rename: old name follows %v, new name follows %v; want only the new", follows(site5.FullName), follows(renamed.FullName))
	}
	if n := fl.fake.Calls("ListRepos") - lists; n != 0 {
		t.Errorf("%d repository listings: the index was rebuilt in full", n)
	}
	fl.tagEvent(1)
	if len(fl.openUpdates(renamed)) != 1 || len(fl.openUpdates(site5)) != 0 {
		t.Errorf("the tag's clone changes: %d under the new name, %d under the old; want 1 and 0", len(fl.openUpdates(renamed)), len(fl.openUpdates(site5)))
	}
	// Each event re-read its own repository's config (a few paths), not
	// the fleet's.
	if n := fl.fake.Calls("ReadFile") - reads; n > 40 {
		t.Errorf("%d config reads for 3 repositories: %s", n, fmt.Sprint("the index was rebuilt"))
	}
}
