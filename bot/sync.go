package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/check"
	"github.com/kptbot/kptbot/commands"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/porch"
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
			if err := commands.RevokeApprovals(ctx, b.commandEnv(rc), commandBot{b, rc}, ev.Change.Number, ev.Sender.Login); err != nil {
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
	// reviewed is set when the change has reviews.
	reviewed bool
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
		if d := porch.PackageOf(pkgs, p); d != "" {
			touched[d] = true
		} else if d := porch.PackageOf(basePkgs, p); d != "" {
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

// evaluate decides the change's verdict, says once on the change when an
// approval no longer counts, and publishes a proposed, approved, green
// change.
func (b *Bot) evaluate(ctx context.Context, w *work) error {
	v, err := b.verdict(ctx, w)
	if err != nil {
		return err
	}
	w.refused = v.Refused
	for _, a := range v.Stale {
		if !w.st.Notice("stale:" + strings.ToLower(a.Login) + "@" + a.SHA + ">" + w.ch.HeadSHA) {
			continue
		}
		msg := fmt.Sprintf("The approval by @%s was given for `%s`; the head is now `%s` and the change differs (its rendered output or the files it touches), so that approval no longer counts. Please review again.", a.Login, short(a.SHA), short(w.ch.HeadSHA))
		if err := b.reply(ctx, w.rc, w.ch.Number, msg); err != nil {
			return err
		}
	}
	if !v.Publish {
		return nil
	}
	return b.publish(ctx, w, v.Valid)
}

// verdict reads what review.Decide needs from the forge (the reviews, and
// for each candidate whether the rules let them approve) and decides.
func (b *Bot) verdict(ctx context.Context, w *work) (review.Verdict, error) {
	rc, ch := w.rc, w.ch
	reviews, err := rc.f.ListReviews(ctx, rc.repo, ch.Number)
	if err != nil {
		return review.Verdict{}, err
	}
	w.reviewed = len(reviews) > 0
	in := review.Input{
		Change:  review.Change{Head: ch.HeadSHA, Author: ch.Author.Login, Draft: ch.Draft},
		Reviews: reviews, State: w.st, Rules: rules(rc), Bot: b.login(rc.repo.Forge),
		Approvers: map[string]bool{}, Rendered: true,
	}
	for _, r := range w.results {
		in.Rendered = in.Rendered && r.OK // a failed render or guardrail blocks publish
	}
	for _, login := range review.Candidates(in) {
		ok, err := b.mayApprove(ctx, rc, login)
		if err != nil {
			return review.Verdict{}, err
		}
		in.Approvers[strings.ToLower(login)] = ok
	}
	return review.Decide(in), nil
}

// rules are the repository's approval rules for review.
func rules(rc *repoCtx) review.Rules {
	a := rc.spec.Approvals
	if a == nil {
		return review.Rules{}
	}
	return review.Rules{Minimum: a.Minimum, AllowAuthor: a.AllowAuthor}
}

// mayApprove applies kptbot.yaml's approvers: the users and teams named,
// or anyone with write permission when none are named.
func (b *Bot) mayApprove(ctx context.Context, rc *repoCtx, login string) (bool, error) {
	rules := rc.spec.Approvals
	if rules == nil || (len(rules.Users) == 0 && len(rules.Teams) == 0) {
		perm, err := rc.f.Permission(ctx, rc.repo, login)
		if err != nil {
			return false, err
		}
		return perm == forge.PermissionWrite || perm == forge.PermissionAdmin, nil
	}
	for _, u := range rules.Users {
		if sameLogin(u, login) {
			return true, nil
		}
	}
	for _, t := range rules.Teams {
		ok, err := rc.f.TeamMember(ctx, rc.repo, t, login)
		if err != nil {
			return false, err
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}
