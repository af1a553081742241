package bot

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgetest"
	"github.com/kptbot/kptbot/forge/github"
)

// newGHWorldWith is a one-replica world whose bot has opts applied.
func newGHWorldWith(t *testing.T, set func(*Options)) *ghWorld {
	t.Helper()
	w := newGHWorld(t, 0)
	client, err := github.NewClient(nil, w.gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	client.GitURL = w.gh.GitURL
	opts := Options{Forges: map[string]forge.Forge{forge.GitHub: client}, Name: "kptbot", Login: "kptbot[bot]"}
	set(&opts)
	b, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	w.addNode(b)
	return w
}

// TestAttackGitHubTreeOverCap is item 16: a pull request whose head holds
// more files than the cap is reported on the change (a failed check and a
// status line), never rendered nor published, and the server keeps
// serving other changes.
func TestAttackGitHubTreeOverCap(t *testing.T) {
	t.Parallel()
	w := newGHWorldWith(t, func(o *Options) { o.MaxTreeFiles = 40 })
	files := map[string][]byte{"pkgs/ns/cm.yaml": scaled("3")}
	for i := 0; i < 60; i++ {
		files[fmt.Sprintf("junk/%03d.txt", i)] = []byte("x")
	}
	n, head := w.openPR("mallory", "big", files, false)
	check, ok := w.gh.Check(w.repo, head, tooLargeCheck)
	if !ok || check.Conclusion != "failure" {
		t.Fatalf("check %s on the oversized head = %+v, %v; want a failure", tooLargeCheck, check, ok)
	}
	said := false
	for _, c := range w.comments(n) {
		said = said || strings.Contains(c, "over kptbot's limits")
	}
	if !said {
		t.Errorf("no status line about the limits: %q", w.comments(n))
	}
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(n, "alice", forge.ReviewApproved, head))
	w.mustNotMerge(n, "a change over the tree cap")
	// The same server still serves a normal change.
	m, mhead := w.openPR("dana", "scale", map[string][]byte{"pkgs/ns/cm.yaml": scaled("4")}, false)
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(m, "alice", forge.ReviewApproved, mhead))
	if !w.change(m).Merged {
		t.Fatalf("a normal change was not published after an oversized one: %q", w.comments(m))
	}
}

// TestAttackGitHubRenderOverBudget is item 13's bot part: a guardrail
// that loops is stopped at the render budget; the check fails naming the
// budget, nothing is published, and the worker is free again.
func TestAttackGitHubRenderOverBudget(t *testing.T) {
	t.Parallel()
	w := newGHWorldWith(t, func(o *Options) { o.RenderTimeout = 300 * time.Millisecond })
	w.setConfig(`apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata:
  name: site-a
spec:
  guardrails:
    validators:
      - image: starlark:v0.5.0
        configMap:
          source: |
            n = 0
            for i in range(9000000):
              n += i
`)
	start := time.Now()
	n, head := w.openPR("dana", "scale", map[string][]byte{"pkgs/ns/cm.yaml": scaled("3")}, false)
	check, ok := w.gh.Check(w.repo, head, "kptbot/pkgs/ns")
	if !ok || check.Conclusion != "failure" || !strings.Contains(check.Summary, "time budget") {
		t.Fatalf("check = %+v, %v; want a failure naming the time budget", check, ok)
	}
	t.Logf("opened and reported in %s", time.Since(start))
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(n, "alice", forge.ReviewApproved, head))
	w.mustNotMerge(n, "a render over its time budget")
}

// panickyForge is a forge whose ReadTree panics for one change's head, as a bug
// in an adapter or the engine would.
type panickyForge struct {
	*forgetest.Fake
	sha   atomic.Value
	calls atomic.Int32
}

func (p *panickyForge) ReadTree(ctx context.Context, r forge.Repo, ref, dir string) (forge.Snapshot, error) {
	if s, _ := p.sha.Load().(string); s != "" && ref == s {
		p.calls.Add(1)
		panic("boom: a bug reached by this change")
	}
	return p.Fake.ReadTree(ctx, r, ref, dir)
}

// TestPanicInOneChangeIsReported is item 16's recovery: a panic while
// handling one change is logged, reported once on that change, returned as
// an error, and the other changes of the repository are still handled —
// both at resync and for a webhook event.
func TestPanicInOneChangeIsReported(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "")
	pf := &panickyForge{Fake: fx.fake}
	b, err := New(Options{Forges: map[string]forge.Forge{forge.GitHub: pf}, Name: "kptbot", Login: "kptbot[bot]"})
	if err != nil {
		t.Fatal(err)
	}
	bad := fx.humanDraft("dana", "bad", "3")
	good := fx.humanDraft("dana", "good", "4")
	pf.sha.Store(bad.HeadSHA)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, err := b.Reconcile(ctx, site); err == nil || !strings.Contains(err.Error(), "internal error") {
			t.Fatalf("resync error = %v, want the internal error reported", err)
		}
	}
	notices := 0
	for _, c := range fx.fake.Comments(site, bad.Number) {
		if strings.Contains(c.Body, "internal error") {
			notices++
			if strings.Contains(c.Body, "boom") {
				t.Errorf("the panic's text reached the change: %q", c.Body)
			}
		}
	}
	if notices != 1 {
		t.Errorf("internal-error notices on the change = %d, want 1", notices)
	}
	if _, ok := fx.fake.Check(site, good.HeadSHA, "kptbot/pkgs/ns"); !ok {
		t.Error("the other change was not handled after the panic")
	}
	ev := forge.Event{Forge: forge.GitHub, Kind: forge.EventChangeSynchronized, Repo: site, Sender: forge.User{Login: "dana"}, Change: &bad}
	if _, err := b.Handle(ctx, ev); err == nil || pf.calls.Load() < 3 {
		t.Fatalf("Handle of the panicking change: err %v, calls %d", err, pf.calls.Load())
	}
}
