package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/porch"
	"github.com/kptbot/kptbot/review"
)

// onComment answers the commands in a new comment on a change: 👀 on
// receipt, then one reply with every command's outcome.
func (b *Bot) onComment(ctx context.Context, ev forge.Event, out *Outcome) error {
	if ev.Comment == nil || ev.Change == nil {
		out.Skipped = "comment event without a comment on a change"
		return nil
	}
	if ev.Comment.Edited {
		out.Skipped = "edited comments are never read as commands"
		return nil
	}
	if isSelf(ev.Comment.Author, b.login(ev.Repo.Forge)) || ev.Comment.Author.Bot {
		out.Skipped = "comment by a bot"
		return nil
	}
	cmds := review.ParseCommands(b.opts.Name, ev.Comment.Body)
	if len(cmds) == 0 {
		out.Skipped = "comment holds no command"
		return nil
	}
	if skip, err := b.confirmComment(ctx, &ev); err != nil || skip != "" {
		out.Skipped = skip
		return err
	}
	return b.withRepo(ctx, ev.Repo, out, func(rc *repoCtx) error {
		number := ev.Change.Number
		if !b.opts.DryRun {
			if err := rc.f.React(ctx, rc.repo, number, ev.Comment.ID, "eyes"); err != nil && !errors.Is(err, forge.ErrNotFound) {
				return err
			}
		}
		var replies []string
		var errs []error
		for _, c := range cmds {
			msg, err := b.run(ctx, rc, number, *ev.Comment, c)
			if err != nil {
				errs = append(errs, err)
				msg = "❌ `" + string(c.Verb) + "` failed: " + userMessage(err)
			}
			if msg != "" {
				replies = append(replies, msg)
			}
		}
		if len(replies) > 0 {
			errs = append(errs, b.reply(ctx, rc, number, "@"+ev.Comment.Author.Login+" "+strings.Join(replies, "\n\n")))
		}
		return errors.Join(errs...)
	})
}

// userMessage is what a PR comment may say about an error: the sentinel's
// meaning, never internal detail such as URLs that could hold credentials.
func userMessage(err error) string {
	switch {
	case errors.Is(err, forge.ErrConflict):
		return "the branch moved while the bot was working; try again"
	case errors.Is(err, forge.ErrPermission):
		return "the bot lacks permission for that on this repository"
	case errors.Is(err, forge.ErrRateLimited):
		return "the forge is rate limiting the bot; it will catch up on the next resync"
	case errors.Is(err, forge.ErrNotFound):
		return "something the command needs no longer exists"
	}
	return "an internal error (see the bot's logs)"
}

// run executes one command of comment cm; the returned text is the reply.
func (b *Bot) run(ctx context.Context, rc *repoCtx, number int, cm forge.Comment, c review.Command) (string, error) {
	who := cm.Author
	if c.Verb == "" {
		msg := fmt.Sprintf("%s is not a %s command.", code(c.Unknown), b.opts.Name)
		if c.Suggest != "" {
			msg += fmt.Sprintf(" Did you mean `/%s %s`?", b.opts.Name, c.Suggest)
		}
		return msg + "\n\n" + review.HelpText(b.opts.Name), nil
	}
	if c.Verb == review.VerbHelp {
		return review.HelpText(b.opts.Name), nil
	}
	perm, err := rc.f.Permission(ctx, rc.repo, who.Login)
	if err != nil {
		return "", err
	}
	if perm != forge.PermissionWrite && perm != forge.PermissionAdmin {
		return fmt.Sprintf("🚫 `%s` needs write permission on %s; @%s has %s.", c.Verb, rc.repo.FullName, who.Login, perm), nil
	}
	ch, err := rc.f.GetChange(ctx, rc.repo, number)
	if err != nil {
		return "", err
	}
	if ch.State != "open" && c.Verb != review.VerbDelete {
		return fmt.Sprintf("This change is %s; `%s` does nothing.", ch.State, c.Verb), nil
	}
	switch c.Verb {
	case review.VerbPropose:
		if !ch.Draft {
			return "Already proposed.", nil
		}
		if err := b.setDraft(ctx, rc, ch, false); err != nil {
			return "", err
		}
		return "Proposed: ready for review.", b.syncChange(ctx, rc, number, forge.Event{})
	case review.VerbReject:
		// Whoever rejects withdraws their own command approval.
		if err := b.revokeCommandApprovals(ctx, rc, ch.Number, who.Login); err != nil {
			return "", err
		}
		if ch.Draft {
			return "Already a draft.", nil
		}
		return "Rejected: back to draft.", b.setDraft(ctx, rc, ch, true)
	case review.VerbApprove:
		return b.approveCommand(ctx, rc, ch, cm, c.Args)
	case review.VerbRender:
		return "Rendered again; see the checks.", b.syncChange(ctx, rc, number, forge.Event{})
	case review.VerbPause, review.VerbResume:
		return b.setPaused(ctx, rc, ch, c.Verb == review.VerbPause)
	case review.VerbDelete:
		return b.deleteCommand(ctx, rc, who, c.Args)
	case review.VerbUpdate, review.VerbRecreate:
		m, ok := ParseMarker(ch.Body)
		if !ok || m.Variant == "" || !isSelf(ch.Author, b.login(rc.repo.Forge)) {
			return fmt.Sprintf("`%s` applies to update changes kptbot opened for package variants; this change is not one.", c.Verb), nil
		}
		// The bot will write content on who's request: who counts as an
		// author of what follows.
		if err := b.addRequester(ctx, rc, ch, who.Login); err != nil {
			return "", err
		}
		if c.Verb == review.VerbRecreate {
			return b.recreate(ctx, rc, ch, m)
		}
		rev := ""
		if len(c.Args) > 0 {
			rev = c.Args[0]
		}
		return b.updateOnto(ctx, rc, ch, m, rev)
	}
	return "", fmt.Errorf("command %q has no handler", c.Verb)
}

// approveCommand records an approval by an approver in the bot's status
// comment (the only place a human cannot edit), then re-evaluates the
// change. The approval is bound to the head the comment was written
// against: the current head, only when the bot saw it before the comment
// was written (comment IDs are the forge's order); otherwise the approver
// must name the commit (/kptbot approve SHA), so a push that lands while
// the command waits in the queue is never approved unseen.
func (b *Bot) approveCommand(ctx context.Context, rc *repoCtx, ch forge.Change, cm forge.Comment, args []string) (string, error) {
	who := cm.Author
	w := &work{rc: rc, ch: ch}
	if err := b.loadStatus(ctx, w); err != nil {
		return "", err
	}
	sha, refusal := review.ApprovedHead(w.st, ch.HeadSHA, cm.ID, args, b.opts.Name)
	if refusal != "" {
		return refusal, b.saveStatus(ctx, w, "")
	}
	c := review.Change{Head: ch.HeadSHA, Author: ch.Author.Login, Draft: ch.Draft}
	switch review.Excluded(who.Login, sha, c, w.st, rules(rc), b.login(rc.repo.Forge)) {
	case review.ExcludedBot:
		return "", nil // the bot's own comments are never commands
	case review.ExcludedAuthor:
		return fmt.Sprintf("🚫 @%s authored this change and cannot approve it.", who.Login), nil
	case review.ExcludedRequester:
		return fmt.Sprintf("🚫 @%s requested this change by command, which makes them its author: they cannot approve it.", who.Login), nil
	case review.ExcludedPusher:
		return fmt.Sprintf("🚫 @%s pushed that commit and cannot approve it.", who.Login), nil
	}
	ok, err := b.mayApprove(ctx, rc, who.Login)
	if err != nil {
		return "", err
	}
	if !ok {
		return fmt.Sprintf("🚫 @%s is not an approver of %s (kptbot.yaml spec.approvals).", who.Login, rc.repo.FullName), nil
	}
	at := cm.CreatedAt
	for _, c := range w.comments {
		if c.ID == cm.ID && !c.CreatedAt.IsZero() {
			at = c.CreatedAt // the forge's record, as listed
		}
	}
	kept := w.st.Approvals[:0]
	for _, a := range w.st.Approvals {
		if !sameLogin(a.By, who.Login) {
			kept = append(kept, a)
		}
	}
	w.st.Approvals = append(kept, review.CommandApproval{By: who.Login, SHA: sha, At: at})
	if err := b.saveStatus(ctx, w, ""); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Approved `%s`.", short(sha))
	if sha != ch.HeadSHA {
		msg += fmt.Sprintf(" The head is now `%s`: the approval counts for it only if the change is identical.", short(ch.HeadSHA))
	}
	if ch.Draft {
		msg += " The change is still a draft: it publishes once proposed."
	}
	return msg, b.syncChange(ctx, rc, ch.Number, forge.Event{})
}

// revokeCommandApprovals drops login's /kptbot approve records on change
// number.
func (b *Bot) revokeCommandApprovals(ctx context.Context, rc *repoCtx, number int, login string) error {
	ch, err := rc.f.GetChange(ctx, rc.repo, number)
	if err != nil {
		return err
	}
	w := &work{rc: rc, ch: ch}
	if err := b.loadStatus(ctx, w); err != nil {
		return err
	}
	kept := w.st.Approvals[:0]
	for _, a := range w.st.Approvals {
		if !sameLogin(a.By, login) {
			kept = append(kept, a)
		}
	}
	if len(kept) == len(w.st.Approvals) {
		return nil
	}
	w.st.Approvals = kept
	return b.saveStatus(ctx, w, "")
}

// addRequester records login as having asked for ch's content by command.
func (b *Bot) addRequester(ctx context.Context, rc *repoCtx, ch forge.Change, login string) error {
	w := &work{rc: rc, ch: ch}
	if err := b.loadStatus(ctx, w); err != nil {
		return err
	}
	if w.st.Requested(login) {
		return nil
	}
	w.st.AddRequester(login)
	return b.saveStatus(ctx, w, "")
}

func (b *Bot) setPaused(ctx context.Context, rc *repoCtx, ch forge.Change, paused bool) (string, error) {
	if m, ok := ParseMarker(ch.Body); ok && m.Variant != "" && m.Paused != paused {
		// An update change: the marker stops the variant's updates.
		m.Paused = paused
		body := review.SetMarker(ch.Body, m)
		if _, err := rc.f.UpdateChange(ctx, rc.repo, ch.Number, forge.ChangeUpdate{Body: &body}); err != nil {
			return "", err
		}
	}
	w := &work{rc: rc, ch: ch}
	if err := b.loadStatus(ctx, w); err != nil {
		return "", err
	}
	w.st.Paused = paused
	if err := b.saveStatus(ctx, w, ""); err != nil {
		return "", err
	}
	if paused {
		return "Paused: the bot will neither update nor publish this change.", nil
	}
	return "Resumed.", b.syncChange(ctx, rc, ch.Number, forge.Event{})
}

// deleteCommand opens a DeletionProposed change: a branch that removes
// the package, proposed for review and published like any other change.
// Whoever asked counts as its author, so they cannot approve it alone.
func (b *Bot) deleteCommand(ctx context.Context, rc *repoCtx, who forge.User, args []string) (string, error) {
	if len(args) != 1 {
		return fmt.Sprintf("Usage: `/%s delete PACKAGE`.", b.opts.Name), nil
	}
	return b.proposeDeletionFor(ctx, rc, strings.Trim(args[0], "/"), who.Login)
}

// proposeDeletion opens (once) the change that deletes a package.
func (b *Bot) proposeDeletion(ctx context.Context, rc *repoCtx, pkg string) (string, error) {
	return b.proposeDeletionFor(ctx, rc, pkg, "")
}

// proposeDeletionFor is proposeDeletion asked for by requester ("" when
// the bot decided it itself), who is recorded as the change's author.
func (b *Bot) proposeDeletionFor(ctx context.Context, rc *repoCtx, pkg, requester string) (string, error) {
	snap, err := rc.f.ReadTree(ctx, rc.repo, rc.repo.DefaultBranch, rc.pkgDir(pkg))
	if err != nil {
		return "", err
	}
	if _, ok := snap.Files["Kptfile"]; !ok {
		return fmt.Sprintf("There is no package %s on %s.", code(pkg), rc.repo.DefaultBranch), nil
	}
	tags, err := rc.f.ListTags(ctx, rc.repo)
	if err != nil {
		return "", err
	}
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = t.Name
	}
	latest, _ := porch.Latest(pkg, names)
	branch := porch.DeletionProposedBranch(pkg, latest)
	if existing, err := rc.f.ListChangesByHead(ctx, rc.repo, branch); err == nil {
		for _, c := range existing {
			if c.State == "open" {
				if requester != "" {
					if err := b.addRequester(ctx, rc, c, requester); err != nil {
						return "", err
					}
				}
				return fmt.Sprintf("Deletion of %s is already proposed in #%d.", code(pkg), c.Number), nil
			}
		}
	}
	if b.opts.DryRun {
		return fmt.Sprintf("Would propose deleting %s.", code(pkg)), nil
	}
	files := map[string][]byte{}
	for p := range snap.Files {
		files[rc.pkgDir(pkg)+"/"+p] = nil
	}
	trailer := porch.TaskTrailer(pkg, "", porch.RevisionName(latest), porch.TypeTask(porch.TaskTypeDelete))
	if _, err := rc.f.PushFiles(ctx, rc.repo, branch, "", snap.Commit, files, "Delete package "+pkg+"\n\n"+trailer); err != nil {
		return "", err
	}
	body := fmt.Sprintf("Deletes package `%s` (latest revision %s). Publishing this change removes the package from %s.\n\n%s",
		pkg, porch.RevisionName(latest), rc.repo.DefaultBranch, FormatMarker(BodyMarker{Package: pkg, Deletion: true}))
	ch, err := rc.f.OpenChange(ctx, rc.repo, forge.ChangeSpec{Head: branch, Base: rc.repo.DefaultBranch, Title: "Delete package " + pkg, Body: body, Labels: []string{"kptbot:deletion"}})
	if err != nil {
		return "", err
	}
	rc.out.Opened = append(rc.out.Opened, ChangeRef{Repo: rc.repo.FullName, Number: ch.Number, Package: pkg, Title: ch.Title, URL: ch.URL})
	if requester != "" {
		if err := b.addRequester(ctx, rc, ch, requester); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("Proposed deleting %s in #%d.", code(pkg), ch.Number), nil
}
