package bot

import (
	"context"
	"fmt"

	"github.com/kptbot/kptbot/forge"
)

// ReportFailure tells the people on ev's change that the bot failed while
// handling their event. What went wrong is in the operators' log, never
// on the change: a crash's details can hold anything.
func (b *Bot) ReportFailure(ctx context.Context, ev forge.Event, retrying bool) error {
	if ev.Change == nil || b.opts.DryRun {
		return nil
	}
	f, err := b.forgeFor(ctx, ev.Repo)
	if err != nil {
		return err
	}
	next := "It gave up on this event; the next resync will look at this change again, or repeat your command."
	if retrying {
		next = "It will try again shortly."
	}
	msg := fmt.Sprintf("%s hit an internal error while handling this %s (the details are in its log for the operators). %s", b.opts.Name, eventNoun(ev.Kind), next)
	if _, err := f.Comment(ctx, ev.Repo, ev.Change.Number, msg); err != nil {
		return fmt.Errorf("commenting on %s#%d: %w", ev.Repo.FullName, ev.Change.Number, err)
	}
	return nil
}

// eventNoun is how a failure report names the event people caused.
func eventNoun(k forge.EventKind) string {
	switch k {
	case forge.EventCommentCreated:
		return "comment"
	case forge.EventReviewSubmitted, forge.EventReviewDismissed, forge.EventApproved, forge.EventUnapproved:
		return "review"
	}
	return "event"
}
