package fanout

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgetest"
	"github.com/kptbot/kptbot/internal/fleettest"
)

var (
	blueprints    = fleettest.Upstream
	downstream    = fleettest.Downstream
	basensNS      = fleettest.BasensNS
	basensKptfile = fleettest.BasensKptfile
	basensQuota   = fleettest.BasensQuota
)

// fleet is fleettest's fleet on the fake forge, with a bot whose
// fan-outs this package runs.
type fleet struct {
	t    testing.TB
	fake *forgetest.Fake
	bot  *bot.Bot
	reg  *prometheus.Registry
	ctx  context.Context
}

func newFleet(t testing.TB, downstreams int) *fleet {
	return newFleetWith(t, downstreams, func(*bot.Options) {})
}

// newFleetWith is newFleet with the bot's options changed by set.
func newFleetWith(t testing.TB, downstreams int, set func(*bot.Options)) *fleet {
	t.Helper()
	fake := forgetest.New()
	fleettest.Seed(t, fake, downstreams)
	reg := prometheus.NewRegistry()
	opts := bot.Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(fake)}, Name: "kptbot", Login: "kptbot[bot]", NewFanOut: For(reg, nil)}
	set(&opts)
	b, err := bot.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fleet{t: t, fake: fake, bot: b, reg: reg, ctx: context.Background()}
}

// reached is kptbot_fanout_downstreams_total{state}.
func (fl *fleet) reached(state string) float64 {
	fl.t.Helper()
	mfs, err := fl.reg.Gather()
	if err != nil {
		fl.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "kptbot_fanout_downstreams_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "state" && l.GetValue() == state {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// publishUpstream commits a new basens revision and tags it.
func (fl *fleet) publishUpstream(n int, files map[string][]byte) {
	fleettest.Publish(fl.t, fl.fake, n, files)
}

func (fl *fleet) tagEvent(n int) bot.Outcome {
	fl.t.Helper()
	out, err := fl.bot.Handle(fl.ctx, forge.Event{Forge: forge.GitHub, Kind: forge.EventTagPushed, Repo: blueprints, Ref: fmt.Sprintf("refs/tags/basens/v%d", n), Sender: forge.User{Login: "alice"}})
	if err != nil {
		fl.t.Fatalf("tag event: %v", err)
	}
	return out
}

func (fl *fleet) openUpdates(r forge.Repo) []forge.Change {
	fl.t.Helper()
	cs, err := fl.fake.ListOpenChanges(fl.ctx, r)
	if err != nil {
		fl.t.Fatal(err)
	}
	var out []forge.Change
	for _, c := range cs {
		if m, ok := bot.ParseMarker(c.Body); ok && m.Variant != "" {
			out = append(out, c)
		}
	}
	return out
}

func TestFanOutClonesThenUpdatesTheSameChange(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, 3)
	out := fl.tagEvent(1)
	if len(out.Opened) != 5 {
		t.Fatalf("opened %d changes, want 5 (3 PackageVariants, 1 explicit target, 1 topic target): %+v", len(out.Opened), out.Opened)
	}
	for _, r := range []forge.Repo{downstream(1), downstream(2), downstream(3)} {
		cs := fl.openUpdates(r)
		if len(cs) != 1 || cs[0].Draft || !strings.Contains(cs[0].Title, "clone") {
			t.Fatalf("%s: update changes %+v, want one ready clone change", r.FullName, cs)
		}
		snap, err := fl.fake.ReadTree(fl.ctx, r, cs[0].HeadSHA, "team-ns")
		if err != nil || !strings.Contains(string(snap.Files["Kptfile"]), "site: site-") || !strings.Contains(string(snap.Files["ns.yaml"]), "owner: v1") {
			t.Fatalf("%s: cloned package = %v, %v", r.FullName, snap.Files, err)
		}
	}
	if cs := fl.openUpdates(forge.Repo{FullName: "acme/edge-topic"}); len(cs) != 1 || cs[0].HeadRef != "drafts/ns-edge/kptbot-update" {
		t.Errorf("topic-selected repository: %+v", cs)
	}
	if cs := fl.openUpdates(forge.Repo{FullName: "acme/explicit"}); len(cs) != 1 || cs[0].HeadRef != "drafts/ns-explicit/kptbot-update" {
		t.Errorf("explicitly targeted repository: %+v", cs)
	}
	// REST writes per change: open + check.
	writes := fl.fake.Calls("OpenChange") + fl.fake.Calls("UpdateChange") + fl.fake.Calls("ReportCheck") + fl.fake.Calls("Comment") + fl.fake.Calls("EditComment") + fl.fake.Calls("CreateTag") + fl.fake.Calls("Merge")
	if writes > 2*5+2 { // + the upstream dashboard issue (open)
		t.Errorf("%d REST writes for 5 changes, want at most 2 per change", writes)
	}
	if got := fl.reached("changed"); got != 5 {
		t.Errorf("kptbot_fanout_downstreams_total{state=changed} = %v, want 5", got)
	}
	// A restart (the same tag again) changes nothing.
	if again := fl.tagEvent(1); len(again.Opened)+len(again.Updated) != 0 {
		t.Errorf("second fan-out of v1 opened %v updated %v, want nothing", again.Opened, again.Updated)
	}
	// A newer tag updates the same change.
	first := fl.openUpdates(downstream(1))[0]
	fl.publishUpstream(2, map[string][]byte{"basens/ns.yaml": []byte(basensNS("v2"))})
	out = fl.tagEvent(2)
	cs := fl.openUpdates(downstream(1))
	if len(cs) != 1 || cs[0].Number != first.Number || cs[0].HeadSHA == first.HeadSHA || len(out.Opened) != 0 {
		t.Fatalf("after v2: changes %+v (opened %v), want #%d updated in place", cs, out.Opened, first.Number)
	}
	snap, _ := fl.fake.ReadTree(fl.ctx, downstream(1), cs[0].HeadSHA, "team-ns")
	if !strings.Contains(string(snap.Files["ns.yaml"]), "owner: v2") {
		t.Errorf("updated change holds %s", snap.Files["ns.yaml"])
	}
	issues, _ := fl.fake.ListIssues(fl.ctx, blueprints, bot.DashboardLabel)
	if len(issues) != 1 || !strings.Contains(issues[0].Body, "Fan-out of `basens`") || !strings.Contains(issues[0].Body, "| acme/site-2 | change #") {
		t.Errorf("upstream dashboard = %+v", issues)
	}
}

func TestUpdateKeepsLocalEditsAndHumanCommits(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, 1)
	r := downstream(1)
	fl.tagEvent(1)
	c := fl.openUpdates(r)[0]
	// Publish the clone: alice approves the bot's change.
	fl.fake.Review(r, c.Number, forge.Review{State: forge.ReviewApproved, Reviewer: forge.User{Login: "alice"}, CommitSHA: c.HeadSHA})
	if _, err := fl.bot.Reconcile(fl.ctx, r); err != nil {
		t.Fatal(err)
	}
	if got, _ := fl.fake.GetChange(fl.ctx, r, c.Number); !got.Merged {
		t.Fatalf("approved clone change not published: %+v", got)
	}
	// A local edit on the published package, then upstream v2.
	main, _ := fl.fake.ReadTree(fl.ctx, r, "main", "")
	if _, err := fl.fake.PushFiles(fl.ctx, r, "main", main.Commit, main.Commit, map[string][]byte{"team-ns/quota.yaml": []byte(basensQuota)}, "local quota"); err != nil {
		t.Fatal(err)
	}
	fl.publishUpstream(2, map[string][]byte{"basens/ns.yaml": []byte(basensNS("v2"))})
	fl.tagEvent(2)
	cs := fl.openUpdates(r)
	if len(cs) != 1 || !strings.Contains(cs[0].Title, "v1 → v2") {
		t.Fatalf("update change = %+v", cs)
	}
	if !strings.Contains(cs[0].Body, "### Upstream changes v1 → v2") || !strings.Contains(cs[0].Body, "basens: revision 2") {
		t.Errorf("update change body lacks the upstream range:\n%s", cs[0].Body)
	}
	snap, _ := fl.fake.ReadTree(fl.ctx, r, cs[0].HeadSHA, "team-ns")
	if !strings.Contains(string(snap.Files["ns.yaml"]), "owner: v2") || snap.Files["quota.yaml"] == nil {
		t.Fatalf("3-way update lost something: %v", snap.Files)
	}
	// A human pushes to the bot's branch; v3 arrives: the bot leaves the
	// branch alone and says how to proceed, once.
	human, err := fl.fake.PushFiles(fl.ctx, r, cs[0].HeadRef, cs[0].HeadSHA, cs[0].HeadSHA, map[string][]byte{"team-ns/extra.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n")}, "mine")
	if err != nil {
		t.Fatal(err)
	}
	fl.publishUpstream(3, map[string][]byte{"basens/ns.yaml": []byte(basensNS("v3"))})
	fl.tagEvent(3)
	fl.tagEvent(3)
	got, _ := fl.fake.GetChange(fl.ctx, r, cs[0].Number)
	if got.HeadSHA != human {
		t.Fatalf("the bot overwrote a human's commit: head %s, want %s", got.HeadSHA, human)
	}
	held := 0
	for _, cm := range fl.fake.Comments(r, got.Number) {
		if strings.Contains(cm.Body, "commits kptbot did not push") {
			held++
		}
	}
	if held != 1 {
		t.Errorf("held notices = %d, want exactly 1", held)
	}
	// /kptbot update merges v3 onto the human's commit.
	cm := fl.fake.AddComment(r, got.Number, forge.User{Login: "dana"}, "/kptbot update")
	if _, err := fl.bot.Handle(fl.ctx, forge.Event{Forge: forge.GitHub, Kind: forge.EventCommentCreated, Repo: r, Sender: cm.Author, Change: &got, Comment: &cm}); err != nil {
		t.Fatal(err)
	}
	got, _ = fl.fake.GetChange(fl.ctx, r, got.Number)
	snap, _ = fl.fake.ReadTree(fl.ctx, r, got.HeadSHA, "team-ns")
	if got.HeadSHA == human || snap.Files["extra.yaml"] == nil || !strings.Contains(string(snap.Files["ns.yaml"]), "owner: v3") {
		t.Fatalf("/kptbot update: head %s files %v", got.HeadSHA, snap.Files)
	}
	// /kptbot recreate rebuilds from scratch, dropping extra.yaml.
	cm = fl.fake.AddComment(r, got.Number, forge.User{Login: "dana"}, "/kptbot recreate")
	if _, err := fl.bot.Handle(fl.ctx, forge.Event{Forge: forge.GitHub, Kind: forge.EventCommentCreated, Repo: r, Sender: cm.Author, Change: &got, Comment: &cm}); err != nil {
		t.Fatal(err)
	}
	got, _ = fl.fake.GetChange(fl.ctx, r, got.Number)
	snap, _ = fl.fake.ReadTree(fl.ctx, r, got.HeadSHA, "team-ns")
	if snap.Files["extra.yaml"] != nil || !strings.Contains(string(snap.Files["ns.yaml"]), "owner: v3") || snap.Files["quota.yaml"] == nil {
		t.Fatalf("/kptbot recreate: files %v", snap.Files)
	}
}

func TestRemovedVariantProposesDeletion(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, 1)
	r := downstream(1)
	fl.tagEvent(1)
	c := fl.openUpdates(r)[0]
	fl.fake.Review(r, c.Number, forge.Review{State: forge.ReviewApproved, Reviewer: forge.User{Login: "alice"}, CommitSHA: c.HeadSHA})
	if _, err := fl.bot.Reconcile(fl.ctx, r); err != nil {
		t.Fatal(err)
	}
	main, _ := fl.fake.ReadTree(fl.ctx, r, "main", "")
	if _, err := fl.fake.PushFiles(fl.ctx, r, "main", main.Commit, main.Commit, map[string][]byte{"kptbot.yaml": []byte("apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: site-1\n")}, "drop the variant"); err != nil {
		t.Fatal(err)
	}
	if _, err := fl.bot.Handle(fl.ctx, forge.Event{Forge: forge.GitHub, Kind: forge.EventBranchPushed, Repo: r, Ref: "refs/heads/main", Sender: forge.User{Login: "alice"}}); err != nil {
		t.Fatal(err)
	}
	cs, _ := fl.fake.ListOpenChanges(fl.ctx, r)
	if len(cs) != 1 || cs[0].HeadRef != "deletionProposed/team-ns/v1" {
		t.Fatalf("open changes after removing the variant = %+v, want the deletion proposal", cs)
	}
}

func TestFanOutByDispatch(t *testing.T) {
	t.Parallel()
	fl := newFleetWith(t, 2, func(o *bot.Options) { o.FanOutByDispatch = true })
	out := fl.tagEvent(1)
	if len(out.Opened) != 0 {
		t.Errorf("a dispatched fan-out opened changes itself: %v", out.Opened)
	}
	got := map[string]bool{}
	for _, d := range fl.fake.Dispatches() {
		if d.EventType != bot.DispatchEventType || d.Payload["package"] != "basens" || d.Payload["upstream"] != "acme/blueprints" {
			t.Errorf("dispatch %+v", d)
		}
		got[d.Repo] = true
	}
	for _, want := range []string{"acme/site-1", "acme/site-2", "acme/explicit", "acme/edge-topic"} {
		if !got[want] {
			t.Errorf("no dispatch to %s (got %v)", want, got)
		}
	}
}
