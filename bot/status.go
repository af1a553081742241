package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/check"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/review"
)

// treeLimits are the caps on each tree read for a change.
func (b *Bot) treeLimits() forge.TreeLimits {
	return forge.TreeLimits{MaxFiles: b.opts.MaxTreeFiles, MaxBytes: b.opts.MaxTreeBytes}
}

// tooLargeCheck is the check that reports a change over the tree caps.
const tooLargeCheck = "kptbot/limits"

// reportTooLarge tells the change it is over the caps (a failed check on
// its head and a line in the status comment) and renders nothing: such a
// change can never publish until it shrinks.
func (b *Bot) reportTooLarge(ctx context.Context, w *work, cause error) error {
	lim := forge.TreeLimitsFrom(forge.WithTreeLimits(ctx, b.treeLimits()))
	msg := fmt.Sprintf("This change's tree is over kptbot's limits (%d files, %d bytes per tree read), so it was not rendered and cannot be published.", lim.MaxFiles, lim.MaxBytes)
	b.log.Warn("change over the tree caps", "repo", w.rc.repo.FullName, "change", w.ch.Number, "err", cause)
	w.rc.out.Problems = append(w.rc.out.Problems, Problem{Severity: SeverityError, Repo: w.rc.repo.FullName, Message: msg})
	w.results = nil
	if b.opts.DryRun {
		return nil
	}
	rep := forge.CheckReport{Name: tooLargeCheck, HeadSHA: w.ch.HeadSHA, Status: forge.CheckCompleted, Conclusion: forge.CheckFailure,
		Title: "over kptbot's size limits", Summary: msg}
	if err := w.rc.f.ReportCheck(ctx, w.rc.repo, rep); err != nil {
		return err
	}
	return b.saveStatus(ctx, w, msg)
}

func (b *Bot) reportCheck(ctx context.Context, w *work, r check.Result) error {
	rep := r.Report(checkPrefix+r.Name, w.ch.HeadSHA)
	w.rc.out.Checks = append(w.rc.out.Checks, CheckRef{Repo: w.rc.repo.FullName, Name: rep.Name, SHA: rep.HeadSHA, Conclusion: string(rep.Conclusion), Package: r.Name, Summary: rep.Title})
	if b.opts.DryRun {
		return nil
	}
	if r.OK && review.IsBotUpdate(w.ch, b.login(w.rc.repo.Forge)) && !b.checkWanted(ctx, w.rc, rep.Name) {
		return nil // single mode: the description says it (writes.go)
	}
	return w.rc.f.ReportCheck(ctx, w.rc.repo, rep)
}

func truncate(s string, n int) string { return check.Truncate(s, n) }

// loadStatus reads the bot's status comment on the change.
func (b *Bot) loadStatus(ctx context.Context, w *work) error {
	comments, err := w.rc.f.ListComments(ctx, w.rc.repo, w.ch.Number)
	if err != nil {
		return err
	}
	w.comments = comments
	w.status = review.FindStatus(comments, b.login(w.rc.repo.Forge))
	w.st = w.status.State
	if w.ch.State == "open" {
		w.st.ObserveHead(w.ch.HeadSHA, comments)
	}
	return nil
}

// saveStatus writes the status comment when its content changed, and
// opens it only when something needs remembering (review.NeedsRecord).
func (b *Bot) saveStatus(ctx context.Context, w *work, extra string) error {
	body := w.st.Render(b.statusSummary(w, extra))
	if body == w.status.Body || b.opts.DryRun {
		return nil
	}
	if w.status.ID == 0 {
		in := review.RecordInputFor(w.ch, w.comments, w.st, b.login(w.rc.repo.Forge))
		in.Reviewed, in.Extra = w.reviewed, extra != "" || len(w.refused) > 0
		if !review.NeedsRecord(in) {
			return nil
		}
	}
	if w.status.ID == 0 {
		c, err := w.rc.f.Comment(ctx, w.rc.repo, w.ch.Number, body)
		if err != nil {
			return err
		}
		w.status = review.Status{ID: c.ID, Body: body, State: w.st}
		w.rc.out.Comments++
		return nil
	}
	if err := w.rc.f.EditComment(ctx, w.rc.repo, w.ch.Number, w.status.ID, body); err != nil {
		return err
	}
	w.status.Body = body
	return nil
}

func (b *Bot) statusSummary(w *work, extra string) string {
	var s strings.Builder
	s.WriteString(review.StatusHeader + "\n\n| package | render | resources |\n|---|---|---|\n")
	for _, r := range w.results {
		state := "✅ rendered"
		if r.Deleted {
			state = "🗑 deleted"
		} else if !r.OK {
			state = "❌ failed"
		}
		fmt.Fprintf(&s, "| %s | %s | +%d ~%d -%d |\n", code(r.Name), state, len(r.Diff.Added), len(r.Diff.Changed), len(r.Diff.Removed))
	}
	if w.st.Paused {
		s.WriteString("\nPaused: the bot will not update this branch (`/" + b.opts.Name + " resume`).\n")
	}
	if len(w.refused) > 0 {
		s.WriteString("\nApprovals that do not count: " + strings.Join(w.refused, "; ") + ".\n")
	}
	if extra != "" {
		s.WriteString("\n" + extra + "\n")
	}
	return s.String()
}

// rejectByReview sends a proposal back to draft on a changes-requested
// review from someone with write permission.
func (b *Bot) rejectByReview(ctx context.Context, rc *repoCtx, ev forge.Event) error {
	perm, err := rc.f.Permission(ctx, rc.repo, ev.Review.Reviewer.Login)
	if err != nil {
		return err
	}
	if perm != forge.PermissionWrite && perm != forge.PermissionAdmin {
		return nil
	}
	ch, err := rc.f.GetChange(ctx, rc.repo, ev.Change.Number)
	if err != nil || ch.Draft || ch.State != "open" {
		return err
	}
	return b.setDraft(ctx, rc, ch, true)
}

func (b *Bot) setDraft(ctx context.Context, rc *repoCtx, ch forge.Change, draft bool) error {
	if b.opts.DryRun {
		return nil
	}
	_, err := rc.f.UpdateChange(ctx, rc.repo, ch.Number, forge.ChangeUpdate{Draft: &draft})
	if err == nil {
		rc.out.Updated = append(rc.out.Updated, ChangeRef{Repo: rc.repo.FullName, Number: ch.Number, Title: ch.Title, URL: ch.URL})
	}
	return err
}

func (b *Bot) reply(ctx context.Context, rc *repoCtx, number int, body string) error {
	if b.opts.DryRun {
		return nil
	}
	if _, err := rc.f.Comment(ctx, rc.repo, number, body); err != nil {
		return err
	}
	rc.out.Comments++
	return nil
}
