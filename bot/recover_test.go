package bot

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgetest"
)

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
	b, err := New(Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(pf)}, Name: "kptbot", Login: "kptbot[bot]"})
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
