package bot

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/kptbot/kptbot/forge"
)

// internalErrorNotice is what a change is told when handling it panicked:
// nothing of the panic itself (that goes to the log), which could echo
// user content or internal detail.
const internalErrorNotice = "⚠️ kptbot hit an internal error while handling this change; the details are in the bot's logs. Nothing was published. The bot will try again on the next event or resync."

// recovering runs fn, turning a panic into an error: the stack is logged,
// the change (number, when not 0) is told once per head, and the caller
// (a server worker, the resync loop) keeps serving other events.
func (b *Bot) recovering(ctx context.Context, r forge.Repo, number int, fn func() error) (err error) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		b.log.Error("panic while handling an event", "repo", r.FullName, "change", number, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		err = fmt.Errorf("internal error handling %s#%d: %v", r.FullName, number, p)
		if number != 0 {
			b.reportInternalError(ctx, r, number)
		}
	}()
	return fn()
}

// reportInternalError says on the change, once per head, that handling it
// failed. It never panics itself.
func (b *Bot) reportInternalError(ctx context.Context, r forge.Repo, number int) {
	defer func() {
		if p := recover(); p != nil {
			b.log.Error("panic while reporting an internal error", "repo", r.FullName, "change", number, "panic", fmt.Sprint(p))
		}
	}()
	if b.opts.DryRun {
		return
	}
	f, err := b.forgeFor(ctx, r)
	if err != nil {
		return
	}
	ch, err := f.GetChange(ctx, r, number)
	if err != nil {
		b.log.Error("reporting an internal error", "repo", r.FullName, "change", number, "err", err)
		return
	}
	rc := &repoCtx{f: f, repo: r, out: &Outcome{}}
	w := &work{rc: rc, ch: ch}
	if err := b.loadStatus(ctx, w); err != nil || !w.st.Notice("internal-error:"+ch.HeadSHA) {
		return
	}
	if _, err := f.Comment(ctx, r, number, internalErrorNotice); err != nil {
		b.log.Error("reporting an internal error", "repo", r.FullName, "change", number, "err", err)
		return
	}
	if err := b.saveStatus(ctx, w, ""); err != nil {
		b.log.Error("reporting an internal error", "repo", r.FullName, "change", number, "err", err)
	}
}
