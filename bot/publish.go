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
)

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
// branch; it is idempotent, so resync can call it after a crash. The new
// revisions' followers are brought up to date once the repository's work
// is done (withRepo), not from inside publish.
func (b *Bot) finishPublish(ctx context.Context, w *work, results []check.Result, approvers []string) error {
	rc, ch := w.rc, w.ch
	var lines []string
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
			rc.published = append(rc.published, r.Name) // withRepo fans them out
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
	v, err := b.verdict(ctx, w)
	if err != nil {
		return err
	}
	if !v.Approved {
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
	if err := b.finishPublish(ctx, w, results, v.Valid); err != nil {
		return err
	}
	return b.saveStatus(ctx, w, "")
}
