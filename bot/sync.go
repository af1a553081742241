package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/check"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/review"
)

// Check names: one per package per head SHA, and one for kptbot.yaml.
const (
	checkPrefix = "kptbot/"
	configCheck = "kptbot/config"
)

func (b *Bot) onChange(ctx context.Context, ev forge.Event, out *Outcome) error {
	if ev.Change == nil {
		out.Skipped = "change event without a change"
		return nil
	}
	return b.withRepo(ctx, ev.Repo, out, func(rc *repoCtx) error {
		if ev.Kind == forge.EventUnapproved && ev.Sender.Login != "" {
			// Revoking on the forge (GitLab's Revoke approval) withdraws
			// the same person's command approval too.
			if err := b.revokeCommandApprovals(ctx, rc, ev.Change.Number, ev.Sender.Login); err != nil {
				return err
			}
		}
		if ev.Kind == forge.EventReviewSubmitted && ev.Review != nil && ev.Review.State == forge.ReviewChangesRequested {
			if err := b.rejectByReview(ctx, rc, ev); err != nil {
				return err
			}
		}
		return b.syncChange(ctx, rc, ev.Change.Number, ev)
	})
}

// work is one change being synchronized.
type work struct {
	rc     *repoCtx
	ch     forge.Change
	status review.Status
	// comments are the change's comments as listed when the status was
	// loaded.
	comments []forge.Comment
	st       review.State
	results  []check.Result
	// cfgChanged is set when the change edits kptbot.yaml.
	cfgChanged bool
	// refused says which approvals do not count, and why.
	refused []string
}

// syncChange renders a change's packages at its head, reports checks,
// evaluates approvals, and publishes when the change is proposed, approved
// and green. ev is the triggering event (zero at resync).
func (b *Bot) syncChange(ctx context.Context, rc *repoCtx, number int, ev forge.Event) error {
	ch, err := rc.f.GetChange(ctx, rc.repo, number)
	if err != nil {
		return err
	}
	if ch.State != "open" {
		return b.afterClose(ctx, rc, number)
	}
	w := &work{rc: rc, ch: ch}
	if err := b.loadStatus(ctx, w); err != nil {
		return err
	}
	switch {
	case ev.Kind == forge.EventChangeSynchronized && ev.Sender.Login != "":
		// The pusher is recorded for the commit the event says they
		// pushed, not for whatever the head is by the time it is handled.
		pushed := ch.HeadSHA
		if ev.Change != nil && ev.Change.HeadSHA != "" {
			pushed = ev.Change.HeadSHA
		}
		w.st.RecordPusher(pushed, ev.Sender.Login)
	case ev.Kind == forge.EventChangeOpened:
		w.st.RecordPusher(ch.HeadSHA, ch.Author.Login)
	}
	err = b.renderChange(forge.WithTreeLimits(ctx, b.treeLimits()), w)
	if errors.Is(err, forge.ErrTreeTooLarge) {
		return b.reportTooLarge(ctx, w, err)
	}
	if err != nil {
		return err
	}
	if len(w.results) == 0 && !w.cfgChanged {
		rc.out.Skipped = fmt.Sprintf("%s#%d touches no package", rc.repo.FullName, number)
		return nil
	}
	if len(w.results) > 0 {
		if err := b.evaluate(ctx, w); err != nil {
			return err
		}
	}
	return b.saveStatus(ctx, w, "")
}

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

// renderChange finds the packages the change touches and renders each.
func (b *Bot) renderChange(ctx context.Context, w *work) error {
	rc, ch := w.rc, w.ch
	head, err := rc.f.ReadTree(ctx, rc.repo, ch.HeadSHA, "")
	if err != nil {
		return fmt.Errorf("reading %s#%d at %s: %w", rc.repo.FullName, ch.Number, ch.HeadSHA, err)
	}
	trusted, err := rc.f.ReadTree(ctx, rc.repo, rc.repo.DefaultBranch, "")
	if err != nil {
		return fmt.Errorf("reading %s@%s: %w", rc.repo.FullName, rc.repo.DefaultBranch, err)
	}
	base := trusted // usually the branch left the default branch's tip
	if fork := b.forkPoint(ctx, rc, ch); fork != trusted.Commit {
		if base, err = rc.f.ReadTree(ctx, rc.repo, fork, ""); err != nil {
			return fmt.Errorf("reading the base of %s#%d: %w", rc.repo.FullName, ch.Number, err)
		}
	}
	pkgs := rc.packagesIn(head.Files)
	basePkgs := rc.packagesIn(base.Files)
	touched := map[string]bool{}
	for _, p := range check.ChangedPaths(base.Files, head.Files) {
		if contains(b.configPaths(), p) {
			w.cfgChanged = true
		}
		if d := packageOf(pkgs, p); d != "" {
			touched[d] = true
		} else if d := packageOf(basePkgs, p); d != "" {
			touched[d] = true // deleted package
		}
	}
	if w.cfgChanged {
		b.checkConfig(ctx, w, head.Files)
	}
	w.results = nil
	w.st.Packages = nil
	for _, d := range append(pkgs, basePkgs...) {
		if !touched[d] {
			continue
		}
		delete(touched, d)
		r := b.checker().Package(ctx, rc.spec.Guardrails, d, rc.pkgName(d), sub(head.Files, d), sub(base.Files, d), sub(trusted.Files, d), ch.FromFork)
		w.results = append(w.results, r)
		w.st.Packages = append(w.st.Packages, r.Name)
		rc.out.Problems = append(rc.out.Problems, problems(rc.repo.FullName, r)...)
		if err := b.reportCheck(ctx, w, r); err != nil {
			return err
		}
	}
	if len(w.results) > 0 {
		// An approval carries to another head only when both the rendered
		// output and every changed path are the same.
		w.st.RecordDigest(ch.HeadSHA, check.CombinedDigest(w.results)+"."+check.ChangeDigest(base.Files, head.Files))
	}
	return nil
}

// forkPoint is where the change's branch left its base: what the change
// touched is measured from there, so packages changed on the base since
// then are not counted as the change's (nor published by it). The base tip
// stands in when the history cannot tell (over 100 commits). The base
// branch is read as it is now: a change's recorded base SHA can be from
// before a rebase, which would count the base's own commits as the change's.
func (b *Bot) forkPoint(ctx context.Context, rc *repoCtx, ch forge.Change) string {
	base := ch.BaseRef
	if base == "" {
		base = ch.BaseSHA
	}
	log, err := rc.f.Log(ctx, rc.repo, base, ch.HeadSHA)
	if err != nil || len(log) == 0 || len(log) >= 100 {
		return base
	}
	if oldest := log[len(log)-1]; len(oldest.Parents) > 0 {
		return oldest.Parents[0]
	}
	return base
}

// checker renders a change's packages under this bot's settings.
func (b *Bot) checker() check.Checker {
	return check.Checker{Functions: b.opts.Functions, Timeout: b.opts.RenderTimeout}
}

// problems are a package check's findings as the outcome reports them.
func problems(repo string, r check.Result) []Problem {
	out := make([]Problem, 0, len(r.Findings))
	for _, f := range r.Findings {
		out = append(out, Problem{Severity: Severity(f.Severity), Repo: repo, Package: r.Name, File: f.File, Line: f.Line, Message: f.Message})
	}
	return out
}

func sub(files map[string][]byte, dir string) kptpkg.Tree {
	t := kptpkg.Tree{}
	for p, c := range files {
		if strings.HasPrefix(p, dir+"/") {
			t[strings.TrimPrefix(p, dir+"/")] = c
		}
	}
	return t
}

func (b *Bot) reportCheck(ctx context.Context, w *work, r check.Result) error {
	rep := forge.CheckReport{Name: checkPrefix + r.Name, HeadSHA: w.ch.HeadSHA, Status: forge.CheckCompleted}
	switch {
	case r.Deleted:
		rep.Conclusion, rep.Title = forge.CheckSuccess, "package deleted"
		rep.Summary = r.Diff.Summary()
	case r.OK:
		rep.Conclusion, rep.Title = forge.CheckSuccess, "rendered"
		rep.Summary = r.Diff.Summary()
	default:
		rep.Conclusion, rep.Title = forge.CheckFailure, "render or validation failed"
		rep.Summary = "```\n" + truncate(r.Message, 60000) + "\n```"
	}
	for _, p := range r.Findings {
		if p.File != "" {
			level := "failure"
			if p.Severity == check.SeverityWarning {
				level = "warning"
			}
			rep.Annotations = append(rep.Annotations, forge.Annotation{Path: p.File, Line: p.Line, Level: level, Message: truncate(p.Message, 1000)})
		}
		loc := p.File
		if p.Line > 0 {
			loc = fmt.Sprintf("%s:%d", p.File, p.Line)
		}
		rep.Summary += fmt.Sprintf("\n- %s `%s`: %s", p.Severity, loc, truncate(p.Message, 500))
	}
	w.rc.out.Checks = append(w.rc.out.Checks, CheckRef{Repo: w.rc.repo.FullName, Name: rep.Name, SHA: rep.HeadSHA, Conclusion: string(rep.Conclusion), Package: r.Name, Summary: rep.Title})
	if b.opts.DryRun {
		return nil
	}
	return w.rc.f.ReportCheck(ctx, w.rc.repo, rep)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

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

// saveStatus writes the status comment when its content changed.
func (b *Bot) saveStatus(ctx context.Context, w *work, extra string) error {
	body := w.st.Render(b.statusSummary(w, extra))
	if body == w.status.Body || b.opts.DryRun {
		return nil
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
