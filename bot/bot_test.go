package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgetest"
)

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

var site = forge.Repo{Forge: forge.GitHub, FullName: "acme/site-a", DefaultBranch: "main"}

// fixture is a repository with one published package on a fake forge.
type fixture struct {
	t    *testing.T
	fake *forgetest.Fake
	bot  *Bot
	base string
}

func newFixture(t *testing.T, kptbotYAML string) *fixture {
	t.Helper()
	fake := forgetest.New()
	files := map[string][]byte{"pkgs/ns/Kptfile": []byte(kptfile), "pkgs/ns/cm.yaml": []byte(configMap), "README.md": []byte("site\n")}
	if kptbotYAML != "" {
		files["kptbot.yaml"] = []byte(kptbotYAML)
	}
	base := fake.Seed(site, "main", files)
	for _, u := range []string{"alice", "bob", "carol", "dana"} {
		fake.Perms[site.FullName+":"+u] = forge.PermissionWrite
	}
	b, err := New(Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(fake)}, Name: "kptbot", Login: "kptbot[bot]"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, fake: fake, bot: b, base: base}
}

// humanDraft pushes an edit of the package as author and opens a draft.
func (fx *fixture) humanDraft(author, branch, replicas string) forge.Change {
	fx.t.Helper()
	ctx := context.Background()
	cm := strings.Replace(configMap, `replicas: "1"`, `replicas: "`+replicas+`"`, 1)
	if _, err := fx.fake.PushFiles(ctx, site, branch, "", "main", map[string][]byte{"pkgs/ns/cm.yaml": []byte(cm)}, "edit"); err != nil {
		fx.t.Fatal(err)
	}
	c, err := fx.fake.OpenChange(ctx, site, forge.ChangeSpec{Head: branch, Base: "main", Title: "scale ns", Draft: true})
	if err != nil {
		fx.t.Fatal(err)
	}
	fx.fake.SetAuthor(site, c.Number, forge.User{Login: author})
	c.Author = forge.User{Login: author}
	fx.handle(forge.Event{Kind: forge.EventChangeOpened, Sender: c.Author, Change: &c})
	return c
}

func (fx *fixture) handle(ev forge.Event) Outcome {
	fx.t.Helper()
	ev.Forge, ev.Repo = forge.GitHub, site
	out, err := fx.bot.Handle(context.Background(), ev)
	if err != nil {
		fx.t.Fatalf("Handle(%s): %v", ev.Kind, err)
	}
	return out
}

func (fx *fixture) comment(c forge.Change, who, body string) Outcome {
	fx.t.Helper()
	cm := fx.fake.AddComment(site, c.Number, forge.User{Login: who}, body)
	return fx.handle(forge.Event{Kind: forge.EventCommentCreated, Sender: forge.User{Login: who}, Change: &c, Comment: &cm})
}

func (fx *fixture) review(c forge.Change, who string, state forge.ReviewState, sha string) Outcome {
	fx.t.Helper()
	rv := forge.Review{State: state, Reviewer: forge.User{Login: who}, CommitSHA: sha}
	fx.fake.Review(site, c.Number, rv)
	return fx.handle(forge.Event{Kind: forge.EventReviewSubmitted, Sender: rv.Reviewer, Change: &c, Review: &rv})
}

func (fx *fixture) change(n int) forge.Change {
	fx.t.Helper()
	c, err := fx.fake.GetChange(context.Background(), site, n)
	if err != nil {
		fx.t.Fatal(err)
	}
	return c
}

func (fx *fixture) tags() []forge.Tag {
	fx.t.Helper()
	tags, err := fx.fake.ListTags(context.Background(), site)
	if err != nil {
		fx.t.Fatal(err)
	}
	return tags
}

func lastComment(fx *fixture, n int) string {
	cs := fx.fake.Comments(site, n)
	if len(cs) == 0 {
		return ""
	}
	return cs[len(cs)-1].Body
}

func TestDraftProposeApprovePublish(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "")
	c := fx.humanDraft("dana", "scale", "3")
	check, ok := fx.fake.Check(site, c.HeadSHA, "kptbot/pkgs/ns")
	if !ok || check.Conclusion != forge.CheckSuccess || !strings.Contains(check.Summary, "ConfigMap team-a/settings") {
		t.Fatalf("render check = %+v, %v; want success naming the changed ConfigMap", check, ok)
	}
	// An approval on a draft does not publish.
	fx.review(c, "alice", forge.ReviewApproved, c.HeadSHA)
	if got := fx.change(c.Number); got.Merged {
		t.Fatal("a draft was merged")
	}
	out := fx.comment(c, "bob", "/kptbot propose")
	got := fx.change(c.Number)
	if !got.Merged || got.MergeCommitSHA == "" {
		t.Fatalf("after propose with alice's approval: change = %+v, want merged", got)
	}
	if len(out.Merged) != 1 || len(out.Tags) != 1 || out.Tags[0].Name != "pkgs/ns/v1" || out.Tags[0].SHA != got.MergeCommitSHA {
		t.Fatalf("outcome = %+v, want one merge and tag pkgs/ns/v1 at the merge commit", out)
	}
	tags := fx.tags()
	if len(tags) != 1 || tags[0] != (forge.Tag{Name: "pkgs/ns/v1", SHA: got.MergeCommitSHA}) {
		t.Errorf("tags = %v", tags)
	}
	if bs, _ := fx.fake.ListBranches(context.Background(), site); len(bs) != 1 {
		t.Errorf("branches after publish = %v, want only main (the draft branch deleted)", bs)
	}
	if r := fx.fake.Reactions(); len(r) != 1 || r[0].Content != "eyes" {
		t.Errorf("reactions = %v, want 👀 on the command", r)
	}
	// The merged event and a resync change nothing more.
	fx.handle(forge.Event{Kind: forge.EventChangeMerged, Change: &got, Sender: forge.User{Login: "kptbot[bot]"}})
	if _, err := fx.bot.Reconcile(context.Background(), site); err != nil {
		t.Fatal(err)
	}
	if tags := fx.tags(); len(tags) != 1 {
		t.Errorf("tags after merged event + resync = %v, want still one", tags)
	}
	// A second change publishes v2.
	c2 := fx.humanDraft("dana", "scale-more", "5")
	fx.comment(c2, "dana", "/kptbot propose")
	fx.review(fx.change(c2.Number), "carol", forge.ReviewApproved, fx.change(c2.Number).HeadSHA)
	if tags := fx.tags(); len(tags) != 2 || tags[1].Name != "pkgs/ns/v2" {
		t.Errorf("tags = %v, want pkgs/ns/v2 added", tags)
	}
}

func TestApprovalRules(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: site-a\nspec:\n  approvals:\n    users: [alice, dana]\n    minimum: 1\n")
	c := fx.humanDraft("dana", "scale", "3")
	fx.comment(c, "dana", "/kptbot propose")
	// Self-approval, a non-approver's review and a read-only user's
	// command are all refused.
	if out := fx.comment(c, "dana", "/kptbot approve"); fx.change(c.Number).Merged || !strings.Contains(lastComment(fx, c.Number), "authored this change") {
		t.Fatalf("self-approval: merged=%v, reply %q (%+v)", fx.change(c.Number).Merged, lastComment(fx, c.Number), out)
	}
	fx.review(c, "bob", forge.ReviewApproved, c.HeadSHA)
	if fx.change(c.Number).Merged {
		t.Fatal("bob is not in approvals.users but his review published")
	}
	status := ""
	for _, cm := range fx.fake.Comments(site, c.Number) {
		if strings.Contains(cm.Body, "kptbot-state") {
			status = cm.Body
		}
	}
	if !strings.Contains(status, "@bob is not an approver") {
		t.Errorf("status comment does not say why bob's approval does not count:\n%s", status)
	}
	fx.comment(c, "mallory", "/kptbot approve")
	if !strings.Contains(lastComment(fx, c.Number), "needs write permission") || fx.change(c.Number).Merged {
		t.Fatalf("read-only user's approve: reply %q", lastComment(fx, c.Number))
	}
	fx.comment(c, "alice", "/kptbot aprove")
	if !strings.Contains(lastComment(fx, c.Number), "Did you mean `/kptbot approve`") {
		t.Errorf("typo reply = %q", lastComment(fx, c.Number))
	}
	// An edited comment never counts.
	cm := fx.fake.AddComment(site, c.Number, forge.User{Login: "alice"}, "/kptbot approve")
	cm.Edited = true
	if out := fx.handle(forge.Event{Kind: forge.EventCommentEdited, Sender: forge.User{Login: "alice"}, Change: &c, Comment: &cm}); out.Skipped == "" || fx.change(c.Number).Merged {
		t.Fatalf("edited approve comment was acted on: %+v", out)
	}
	fx.comment(c, "alice", "LGTM\n/kptbot approve")
	if got := fx.change(c.Number); !got.Merged {
		t.Fatalf("alice (an approver) approved with a command, change not merged: %+v\nlast comment: %s", got, lastComment(fx, c.Number))
	}
}

func TestPushAfterApproval(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: site-a\nspec:\n  approvals:\n    minimum: 2\n")
	ctx := context.Background()
	c := fx.humanDraft("dana", "scale", "3")
	fx.comment(c, "dana", "/kptbot propose")
	fx.review(c, "alice", forge.ReviewApproved, c.HeadSHA)
	// A rebase onto a moved main keeps the rendered output: still counts.
	if _, err := fx.fake.PushFiles(ctx, site, "main", fx.base, fx.base, map[string][]byte{"README.md": []byte("moved\n")}, "main moves"); err != nil {
		t.Fatal(err)
	}
	cm := strings.Replace(configMap, `replicas: "1"`, `replicas: "3"`, 1)
	rebased, err := fx.fake.PushFiles(ctx, site, "scale", c.HeadSHA, "main", map[string][]byte{"pkgs/ns/cm.yaml": []byte(cm)}, "rebase")
	if err != nil {
		t.Fatal(err)
	}
	c = fx.change(c.Number)
	fx.handle(forge.Event{Kind: forge.EventChangeSynchronized, Sender: forge.User{Login: "dana"}, Change: &c})
	if strings.Contains(lastComment(fx, c.Number), "no longer counts") {
		t.Fatalf("a rebase with identical render invalidated the approval: %s", lastComment(fx, c.Number))
	}
	// A real change after approval invalidates it, and the bot says so once.
	cm = strings.Replace(configMap, `replicas: "1"`, `replicas: "30"`, 1)
	if _, err := fx.fake.PushFiles(ctx, site, "scale", rebased, rebased, map[string][]byte{"pkgs/ns/cm.yaml": []byte(cm)}, "more"); err != nil {
		t.Fatal(err)
	}
	c = fx.change(c.Number)
	fx.handle(forge.Event{Kind: forge.EventChangeSynchronized, Sender: forge.User{Login: "bob"}, Change: &c})
	if !strings.Contains(lastComment(fx, c.Number), "no longer counts") {
		t.Fatalf("approval not invalidated after a content change; last comment %q", lastComment(fx, c.Number))
	}
	n := len(fx.fake.Comments(site, c.Number))
	fx.bot.Reconcile(ctx, site)
	if got := len(fx.fake.Comments(site, c.Number)); got != n {
		t.Errorf("resync repeated the notice: %d comments, was %d", got, n)
	}
	// bob pushed the head: his approval does not count; carol's and
	// alice's new one do.
	fx.review(c, "bob", forge.ReviewApproved, c.HeadSHA)
	fx.review(c, "carol", forge.ReviewApproved, c.HeadSHA)
	if fx.change(c.Number).Merged {
		t.Fatal("merged with one valid approval (bob pushed the head), minimum is 2")
	}
	fx.review(c, "alice", forge.ReviewApproved, c.HeadSHA)
	if !fx.change(c.Number).Merged {
		t.Fatal("not merged with carol's and alice's approvals of the head")
	}
}

func TestGuardrailBlocksPublish(t *testing.T) {
	t.Parallel()
	cfg := `apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata:
  name: site-a
spec:
  guardrails:
    validators:
      - image: ghcr.io/kptdev/krm-functions-catalog/starlark:v0.5.0
        configMap:
          source: |
            for r in ctx.resource_list["items"]:
              if r["kind"] == "ConfigMap" and int(r["data"]["replicas"]) > 10:
                fail("replicas above 10 in " + r["metadata"]["name"])
`
	fx := newFixture(t, cfg)
	c := fx.humanDraft("dana", "scale", "30")
	check, _ := fx.fake.Check(site, c.HeadSHA, "kptbot/pkgs/ns")
	if check.Conclusion != forge.CheckFailure || !strings.Contains(check.Summary, "replicas above 10") {
		t.Fatalf("check = %+v, want a failure from the guardrail", check)
	}
	fx.comment(c, "dana", "/kptbot propose")
	fx.review(fx.change(c.Number), "alice", forge.ReviewApproved, c.HeadSHA)
	if fx.change(c.Number).Merged {
		t.Fatal("a change failing a guardrail was published")
	}
}

func TestRejectAndBranchProtection(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "")
	c := fx.humanDraft("dana", "scale", "3")
	fx.comment(c, "dana", "/kptbot propose")
	fx.review(fx.change(c.Number), "alice", forge.ReviewChangesRequested, c.HeadSHA)
	if !fx.change(c.Number).Draft {
		t.Fatal("changes requested did not send the proposal back to draft")
	}
	fx.comment(c, "dana", "/kptbot propose")
	fx.fake.BlockMerges(site, "Required status check \"ci\" is expected.")
	fx.review(fx.change(c.Number), "alice", forge.ReviewApproved, c.HeadSHA)
	if fx.change(c.Number).Merged || !strings.Contains(lastComment(fx, c.Number), "Required status check") {
		t.Fatalf("refused merge: last comment %q", lastComment(fx, c.Number))
	}
	fx.fake.BlockMerges(site, "")
	if _, err := fx.bot.Reconcile(context.Background(), site); err != nil {
		t.Fatal(err)
	}
	if !fx.change(c.Number).Merged || len(fx.tags()) != 1 {
		t.Fatal("resync after protection lifted did not publish")
	}
}

func TestCrashBetweenMergeAndTag(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "")
	c := fx.humanDraft("dana", "scale", "3")
	fx.comment(c, "dana", "/kptbot propose")
	fx.fake.Fail("CreateTag", context.DeadlineExceeded)
	rv := forge.Review{State: forge.ReviewApproved, Reviewer: forge.User{Login: "alice"}, CommitSHA: c.HeadSHA}
	fx.fake.Review(site, c.Number, rv)
	ev := forge.Event{Forge: forge.GitHub, Repo: site, Kind: forge.EventReviewSubmitted, Sender: rv.Reviewer, Change: &c, Review: &rv}
	if _, err := fx.bot.Handle(context.Background(), ev); err == nil {
		t.Fatal("want the tag failure reported")
	}
	if !fx.change(c.Number).Merged || len(fx.tags()) != 0 {
		t.Fatal("setup: want merged and untagged")
	}
	fx.fake.Fail("CreateTag", nil)
	for i := 0; i < 2; i++ {
		if _, err := fx.bot.Reconcile(context.Background(), site); err != nil {
			t.Fatal(err)
		}
	}
	if tags := fx.tags(); len(tags) != 1 || tags[0].SHA != fx.change(c.Number).MergeCommitSHA {
		t.Fatalf("after resync: tags %v, want one at the merge commit", tags)
	}
}

func TestDashboardAndConfigCheck(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "")
	ctx := context.Background()
	c := fx.humanDraft("dana", "scale", "3")
	if _, err := fx.bot.Reconcile(ctx, site); err != nil {
		t.Fatal(err)
	}
	issues, _ := fx.fake.ListIssues(ctx, site, DashboardLabel)
	if len(issues) != 1 || !strings.Contains(issues[0].Body, "| `pkgs/ns` | — | #1 |") {
		t.Fatalf("dashboard = %+v", issues)
	}
	if _, err := fx.bot.Reconcile(ctx, site); err != nil {
		t.Fatal(err)
	}
	if issues, _ := fx.fake.ListIssues(ctx, site, DashboardLabel); len(issues) != 1 {
		t.Fatalf("second resync opened another dashboard: %v", issues)
	}
	// A change to kptbot.yaml gets a validation check.
	bad := "apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: x\nspec:\n  updatePolicy: sometimes\n"
	if _, err := fx.fake.PushFiles(ctx, site, "cfg", "", "main", map[string][]byte{"kptbot.yaml": []byte(bad)}, "cfg"); err != nil {
		t.Fatal(err)
	}
	cc, _ := fx.fake.OpenChange(ctx, site, forge.ChangeSpec{Head: "cfg", Base: "main", Title: "cfg"})
	out := fx.handle(forge.Event{Kind: forge.EventChangeOpened, Sender: forge.User{Login: "dana"}, Change: &cc})
	check, ok := fx.fake.Check(site, cc.HeadSHA, "kptbot/config")
	if !ok || check.Conclusion != forge.CheckFailure || !strings.Contains(check.Summary, "updatePolicy") {
		t.Fatalf("config check = %+v (%v); outcome %+v", check, ok, out)
	}
	_ = c
}

func TestMergeRetriedWhileMergeabilityIsComputed(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "")
	fx.bot.mergeWaits = []time.Duration{time.Millisecond, time.Millisecond}
	c := fx.humanDraft("dana", "scale", "3")
	fx.comment(c, "dana", "/kptbot propose")
	fx.fake.BlockMergesFor(site, "Pull Request mergeability is still being computed", 2)
	fx.review(fx.change(c.Number), "alice", forge.ReviewApproved, c.HeadSHA)
	if !fx.change(c.Number).Merged || len(fx.tags()) != 1 {
		t.Fatalf("merge not retried: merged=%v, last comment %q", fx.change(c.Number).Merged, lastComment(fx, c.Number))
	}
}

// TestFunctionPolicy: a change's head cannot bring its own exec or
// container function to run, even when the server allows exec, and a fork
// runs built-ins only.
func TestFunctionPolicy(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "")
	fx.bot.opts.Functions = Policy{AllowExec: true}
	ctx := context.Background()
	evil := strings.Replace(kptfile, "pipeline:\n  mutators:\n", "pipeline:\n  mutators:\n    - exec: /bin/sh\n      configMap: {x: y}\n", 1)
	if _, err := fx.fake.PushFiles(ctx, site, "evil", "", "main", map[string][]byte{"pkgs/ns/Kptfile": []byte(evil)}, "run my binary"); err != nil {
		t.Fatal(err)
	}
	c, _ := fx.fake.OpenChange(ctx, site, forge.ChangeSpec{Head: "evil", Base: "main", Title: "evil"})
	fx.handle(forge.Event{Kind: forge.EventChangeOpened, Sender: forge.User{Login: "mallory"}, Change: &c})
	check, _ := fx.fake.Check(site, c.HeadSHA, "kptbot/pkgs/ns")
	if check.Conclusion != forge.CheckFailure || !strings.Contains(check.Summary, "comes from this change") {
		t.Fatalf("exec function from a change's head: check %+v", check)
	}
	// From a fork, even a function the default branch has is refused.
	fx.bot.opts.Functions = Policy{AllowExec: true, AllowContainers: true, AllowedImages: []string{"example.com/fn:v1"}}
	withImage := strings.Replace(kptfile, "pipeline:\n  mutators:\n", "pipeline:\n  mutators:\n    - image: example.com/fn:v1\n", 1)
	if _, err := fx.fake.PushFiles(ctx, site, "fork", "", "main", map[string][]byte{"pkgs/ns/Kptfile": []byte(withImage)}, "fork"); err != nil {
		t.Fatal(err)
	}
	f, _ := fx.fake.OpenChange(ctx, site, forge.ChangeSpec{Head: "fork", Base: "main", Title: "fork"})
	f.FromFork = true
	if b, err := New(Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(forkFake{fx.fake})}, Name: "kptbot", Functions: fx.bot.opts.Functions}); err == nil {
		ev := forge.Event{Forge: forge.GitHub, Repo: site, Kind: forge.EventChangeOpened, Sender: forge.User{Login: "mallory"}, Change: &f}
		if _, err := b.Handle(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	check, _ = fx.fake.Check(site, f.HeadSHA, "kptbot/pkgs/ns")
	if check.Conclusion != forge.CheckFailure || !strings.Contains(check.Summary, "forks run built-in functions only") {
		t.Fatalf("container function from a fork: check %+v", check)
	}
}

// forkFake reports every change as coming from a fork.
type forkFake struct{ *forgetest.Fake }

func (f forkFake) GetChange(ctx context.Context, r forge.Repo, n int) (forge.Change, error) {
	c, err := f.Fake.GetChange(ctx, r, n)
	c.FromFork = true
	return c, err
}

// TestChangeMeasuredFromItsForkPoint: packages changed on main after a
// branch left it are not the change's: not rendered as its, and not
// published (or deleted) by it.
func TestChangeMeasuredFromItsForkPoint(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "")
	ctx := context.Background()
	cm := strings.Replace(configMap, `replicas: "1"`, `replicas: "3"`, 1)
	if _, err := fx.fake.PushFiles(ctx, site, "scale", "", fx.base, map[string][]byte{"pkgs/ns/cm.yaml": []byte(cm)}, "scale"); err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(kptfile, "name: ns", "name: other", 1)
	if _, err := fx.fake.PushFiles(ctx, site, "main", fx.base, fx.base, map[string][]byte{"pkgs/other/Kptfile": []byte(other), "pkgs/other/cm.yaml": []byte(configMap)}, "another package lands on main"); err != nil {
		t.Fatal(err)
	}
	c, _ := fx.fake.OpenChange(ctx, site, forge.ChangeSpec{Head: "scale", Base: "main", Title: "scale"})
	fx.fake.SetAuthor(site, c.Number, forge.User{Login: "dana"})
	c.Author = forge.User{Login: "dana"}
	out := fx.handle(forge.Event{Kind: forge.EventChangeOpened, Sender: c.Author, Change: &c})
	if len(out.Checks) != 1 || out.Checks[0].Package != "pkgs/ns" {
		t.Fatalf("checks = %+v, want only pkgs/ns (pkgs/other landed on main after the branch left it)", out.Checks)
	}
	fx.review(c, "alice", forge.ReviewApproved, c.HeadSHA)
	if tags := fx.tags(); len(tags) != 1 || tags[0].Name != "pkgs/ns/v1" {
		t.Fatalf("tags = %v, want only pkgs/ns/v1", tags)
	}
	if snap, _ := fx.fake.ReadTree(ctx, site, "main", "pkgs/other"); len(snap.Files) != 2 {
		t.Errorf("pkgs/other after the merge = %v, want it kept", snap.Files)
	}
}

func TestNoDashboardWithoutPackages(t *testing.T) {
	t.Parallel()
	fake := forgetest.New()
	empty := forge.Repo{Forge: forge.GitHub, FullName: "acme/website", DefaultBranch: "main"}
	fake.Seed(empty, "main", map[string][]byte{"index.html": []byte("<p>hi</p>\n")})
	b, err := New(Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(fake)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reconcile(context.Background(), empty); err != nil {
		t.Fatal(err)
	}
	if issues, _ := fake.ListIssues(context.Background(), empty, DashboardLabel); len(issues) != 0 {
		t.Errorf("a repository without packages or kptbot.yaml got a dashboard: %+v", issues)
	}
}
