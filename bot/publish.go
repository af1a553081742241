package bot

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kptbot/kptbot/check"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/porch"
	"github.com/kptbot/kptbot/review"
)

// verdict is the approval count for a change's head.
type verdict struct {
	valid []string
	// stale are approvals of an earlier head whose change differs.
	stale []review.Approval
	// refused explains approvals that do not count (author, requester,
	// pusher, not an approver).
	refused []string
}

// approvals collects the latest word of each reviewer (reviews on the
// forge, and /kptbot approve commands the bot recorded) and counts the
// approvals that hold for the current head under the repository's rules.
func (b *Bot) approvals(ctx context.Context, w *work) (verdict, error) {
	rc, ch := w.rc, w.ch
	reviews, err := rc.f.ListReviews(ctx, rc.repo, ch.Number)
	if err != nil {
		return verdict{}, err
	}
	var v verdict
	rules := rc.spec.Approvals
	authorMay := rules != nil && rules.AllowAuthor
	for _, a := range review.Latest(reviews, w.st.Approvals) {
		switch {
		case sameLogin(a.Login, b.login(rc.repo.Forge)):
			continue
		case sameLogin(a.Login, ch.Author.Login) && !authorMay:
			v.refused = append(v.refused, fmt.Sprintf("@%s authored the change", a.Login))
			continue
		case w.st.Requested(a.Login) && !authorMay:
			v.refused = append(v.refused, fmt.Sprintf("@%s requested the change by command, which makes them its author", a.Login))
			continue
		case sameLogin(a.Login, w.st.Pushers[ch.HeadSHA]):
			v.refused = append(v.refused, fmt.Sprintf("@%s pushed the head commit", a.Login))
			continue
		}
		ok, err := b.mayApprove(ctx, rc, a.Login)
		if err != nil {
			return v, err
		}
		if !ok {
			v.refused = append(v.refused, fmt.Sprintf("@%s is not an approver", a.Login))
			continue
		}
		if a.SHA != "" && (a.SHA == ch.HeadSHA || (w.st.Digests[a.SHA] != "" && w.st.Digests[a.SHA] == w.st.Digests[ch.HeadSHA])) {
			v.valid = append(v.valid, a.Login)
			continue
		}
		v.stale = append(v.stale, a)
	}
	return v, nil
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

func (b *Bot) minimum(rc *repoCtx) int {
	if a := rc.spec.Approvals; a != nil && a.Minimum > 0 {
		return a.Minimum
	}
	return 1
}

// evaluate counts approvals, says once on the change when an approval no
// longer counts, and publishes a proposed, approved, green change.
func (b *Bot) evaluate(ctx context.Context, w *work) error {
	v, err := b.approvals(ctx, w)
	if err != nil {
		return err
	}
	w.refused = v.refused
	for _, a := range v.stale {
		if !w.st.Notice("stale:" + strings.ToLower(a.Login) + "@" + a.SHA + ">" + w.ch.HeadSHA) {
			continue
		}
		msg := fmt.Sprintf("The approval by @%s was given for `%s`; the head is now `%s` and the change differs (its rendered output or the files it touches), so that approval no longer counts. Please review again.", a.Login, short(a.SHA), short(w.ch.HeadSHA))
		if err := b.reply(ctx, w.rc, w.ch.Number, msg); err != nil {
			return err
		}
	}
	for _, r := range w.results {
		if !r.OK {
			return nil // a failed render or guardrail blocks publish
		}
	}
	if w.ch.Draft || len(v.valid) < b.minimum(w.rc) || w.st.Paused {
		return nil
	}
	return b.publish(ctx, w, v.valid)
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

// publish merges exactly the approved head and tags the merge commit for
// every package the change touched, then deletes the branch. Each step is
// a compare-and-swap, so racing replicas merge once and tag once.
func (b *Bot) publish(ctx context.Context, w *work, approvers []string) error {
	rc, ch := w.rc, w.ch
	if b.opts.DryRun {
		rc.out.Merged = append(rc.out.Merged, ChangeRef{Repo: rc.repo.FullName, Number: ch.Number, Title: ch.Title, URL: ch.URL})
		return nil
	}
	sha, err := b.mergeWhenComputed(ctx, rc, ch)
	if err != nil {
		// Another replica may have merged it a moment ago.
		if cur, gerr := rc.f.GetChange(ctx, rc.repo, ch.Number); gerr == nil && cur.Merged && cur.HeadSHA == ch.HeadSHA {
			return b.afterClose(ctx, rc, ch.Number)
		}
		if errors.Is(err, forge.ErrNotMergeable) {
			if w.st.Notice("unmergeable:" + ch.HeadSHA + ":" + err.Error()) {
				return b.reply(ctx, rc, ch.Number, fmt.Sprintf("Approved, but the forge refused the merge: %s\n\nkptbot will try again on the next event or resync.", userText(err.Error())))
			}
			return nil
		}
		if errors.Is(err, forge.ErrConflict) {
			return nil // the head moved: the next event re-evaluates
		}
		return err
	}
	rc.out.Merged = append(rc.out.Merged, ChangeRef{Repo: rc.repo.FullName, Number: ch.Number, Title: ch.Title, URL: ch.URL})
	w.ch.Merged, w.ch.MergeCommitSHA, w.ch.State = true, sha, "merged"
	return b.finishPublish(ctx, w, w.results, approvers)
}

// defaultMergeWaits are the waits before retrying a merge the forge
// refused because it was still computing mergeability (right after a push
// or a base change, GitHub and GitLab answer "not mergeable" for a moment).
func defaultMergeWaits() []time.Duration {
	return []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
}

// stillComputing recognizes those transient refusals.
func stillComputing(err error) bool {
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"being computed", "base branch was modified", "checking", "try again"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func (b *Bot) mergeWhenComputed(ctx context.Context, rc *repoCtx, ch forge.Change) (string, error) {
	for i := 0; ; i++ {
		sha, err := rc.f.Merge(ctx, rc.repo, ch.Number, ch.HeadSHA, rc.spec.MergeMethod)
		if err == nil || !errors.Is(err, forge.ErrNotMergeable) || !stillComputing(err) || i == len(b.mergeWaits) {
			return sha, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(b.mergeWaits[i]):
		}
	}
}

// finishPublish tags the merge commit for each package and deletes the
// branch; it is idempotent, so resync can call it after a crash.
func (b *Bot) finishPublish(ctx context.Context, w *work, results []check.Result, approvers []string) error {
	rc, ch := w.rc, w.ch
	var lines, published []string
	defer func() {
		// A new revision is an upstream tag for whoever follows it.
		for _, pkg := range published {
			o, _, err := b.FanOut(ctx, rc.repo, pkg)
			rc.out.Add(o)
			if err != nil {
				rc.out.Problems = append(rc.out.Problems, Problem{Severity: SeverityWarning, Repo: rc.repo.FullName, Package: pkg, Message: "fan-out: " + err.Error()})
			}
		}
	}()
	for _, r := range results {
		if r.Deleted {
			lines = append(lines, fmt.Sprintf("- %s: deleted", code(r.Name)))
			continue
		}
		tag, created, err := b.ensureTag(ctx, rc, r.Name, ch, approvers)
		if err != nil {
			return err
		}
		if created {
			rc.out.Tags = append(rc.out.Tags, TagRef{Repo: rc.repo.FullName, Name: tag, SHA: ch.MergeCommitSHA, Package: r.Name})
			published = append(published, r.Name)
		}
		lines = append(lines, fmt.Sprintf("- %s published as %s", code(r.Name), code(tag)))
	}
	if !ch.FromFork {
		if err := rc.f.DeleteBranch(ctx, rc.repo, ch.HeadRef, ch.HeadSHA); err != nil && !errors.Is(err, forge.ErrConflict) {
			return err
		}
	}
	if len(lines) == 0 || !w.st.Notice("published:"+ch.MergeCommitSHA) {
		return nil
	}
	msg := fmt.Sprintf("Merged `%s` as `%s`.\n\n%s", short(ch.HeadSHA), short(ch.MergeCommitSHA), strings.Join(lines, "\n"))
	if len(approvers) > 0 {
		msg += "\n\nApproved by " + atAll(approvers) + "."
	}
	return b.reply(ctx, rc, ch.Number, msg)
}

func atAll(logins []string) string {
	out := make([]string, len(logins))
	for i, l := range logins {
		out[i] = "@" + l
	}
	return strings.Join(out, ", ")
}

// ensureTag gives the merge commit a revision tag of pkg: an existing
// <pkg>/v<N> at that commit is reused, otherwise N is one more than the
// highest. A racing replica that took N first at the same commit makes
// the create succeed (idempotent); at another commit, N is recomputed.
func (b *Bot) ensureTag(ctx context.Context, rc *repoCtx, pkg string, ch forge.Change, approvers []string) (string, bool, error) {
	for attempt := 0; attempt < 5; attempt++ {
		tags, err := rc.f.ListTags(ctx, rc.repo)
		if err != nil {
			return "", false, err
		}
		for _, t := range tags {
			if p, _, ok := porch.ParseTag(t.Name); ok && p == pkg && t.SHA == ch.MergeCommitSHA {
				return t.Name, false, nil
			}
		}
		highest, _ := porch.LatestOf(pkg, tags, func(t forge.Tag) string { return t.Name })
		name := porch.Tag(pkg, highest+1)
		described := ch
		if !isSelf(ch.Author, b.login(rc.repo.Forge)) {
			described.Body = "" // a person's description carries no marker the bot trusts
		}
		msg := tagMessage(pkg, highest+1, described, approvers)
		err = rc.f.CreateTag(ctx, rc.repo, name, ch.MergeCommitSHA, msg)
		if err == nil {
			return name, true, nil
		}
		if !errors.Is(err, forge.ErrConflict) {
			return "", false, err
		}
	}
	return "", false, fmt.Errorf("tagging %s in %s: revision numbers kept moving under concurrent publishes", pkg, rc.repo.FullName)
}

func tagMessage(pkg string, n int, ch forge.Change, approvers []string) string {
	var b strings.Builder
	ref := fmt.Sprintf("#%d", ch.Number)
	if strings.Contains(ch.URL, "/-/merge_requests/") {
		ref = fmt.Sprintf("!%d", ch.Number) // GitLab's merge request notation
	}
	fmt.Fprintf(&b, "%s revision %d\n\nPublished from change %s (%s), head %s.\n", pkg, n, ref, ch.Title, ch.HeadSHA)
	if len(approvers) > 0 {
		sorted := append([]string(nil), approvers...)
		sort.Strings(sorted)
		fmt.Fprintf(&b, "Approved-by: %s\n", strings.Join(sorted, ", "))
	}
	if m, ok := ParseMarker(ch.Body); ok && m.UpstreamLock != "" {
		fmt.Fprintf(&b, "Upstream-lock: %s\n", m.UpstreamLock)
	}
	return b.String()
}

// afterClose finishes a merged change: when its head was approved under
// the rules (the bot merged it and may have crashed before tagging), the
// tags are made; a change merged around the bot is not published, and the
// bot says so once.
func (b *Bot) afterClose(ctx context.Context, rc *repoCtx, number int) error {
	ch, err := rc.f.GetChange(ctx, rc.repo, number)
	if err != nil {
		return err
	}
	if !ch.Merged {
		return nil
	}
	w := &work{rc: rc, ch: ch}
	if err := b.loadStatus(ctx, w); err != nil {
		return err
	}
	if len(w.st.Packages) == 0 {
		return nil // the bot never saw a package in it
	}
	v, err := b.approvals(ctx, w)
	if err != nil {
		return err
	}
	if len(v.valid) < b.minimum(rc) {
		if w.st.Notice("merged-unapproved:" + ch.HeadSHA) {
			if err := b.reply(ctx, rc, number, "This change was merged without the approvals kptbot.yaml requires for its head `"+short(ch.HeadSHA)+"`, so no package revision was published."); err != nil {
				return err
			}
		}
		return b.saveStatus(ctx, w, "")
	}
	results := make([]check.Result, 0, len(w.st.Packages))
	for _, p := range w.st.Packages {
		snap, err := rc.f.ReadTree(ctx, rc.repo, ch.MergeCommitSHA, rc.pkgDir(p))
		if err != nil {
			return err
		}
		results = append(results, check.Result{Name: p, Dir: rc.pkgDir(p), Deleted: len(snap.Files) == 0, OK: true})
	}
	w.results = results
	if err := b.finishPublish(ctx, w, results, v.valid); err != nil {
		return err
	}
	return b.saveStatus(ctx, w, "")
}
