// Package commands answers the commands people write in comments on a
// change (/kptbot approve, propose, reject, render, pause, resume, delete,
// update, recreate): who may run each, what each does to the change and
// its status record, and the one reply listing every command's outcome.
// The bot reaches it with the repository it opened; it reaches the bot's
// flows (sync, drafts, the status record, deletion and variant updates)
// through Bot.
package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/review"
)

// Bot is what the commands ask of the bot, on the repository it opened
// for them.
type Bot interface {
	// Sync reads change number again, renders it, reports its checks and
	// evaluates it (publishing it when it is approved).
	Sync(ctx context.Context, number int) error
	// SetDraft sends change ch back to draft or proposes it.
	SetDraft(ctx context.Context, ch forge.Change, draft bool) error
	// EditRecord loads change ch's status record and the comments listed
	// with it, lets edit change the record, and writes it when edit says
	// save.
	EditRecord(ctx context.Context, ch forge.Change, edit func(st *review.State, comments []forge.Comment) (save bool, err error)) error
	// MayApprove says whether login is an approver of the repository
	// (kptbot.yaml spec.approvals).
	MayApprove(ctx context.Context, login string) (bool, error)
	// ProposeDeletion is the package function ProposeDeletion on this
	// repository, with the change it opens recorded in the bot's outcome.
	ProposeDeletion(ctx context.Context, pkg, requester string) (string, error)
	// UpdateVariant brings update change ch (m is its marker) up to date:
	// rebuilt from scratch when recreate, else upstream revision rev (""
	// for the latest) merged onto the branch as it is. The text is the
	// reply.
	UpdateVariant(ctx context.Context, ch forge.Change, m review.BodyMarker, recreate bool, rev string) (string, error)
}

// Env is where the commands run: the bot's names and the repository the
// bot opened (its forge, and its approval rules from the default branch).
type Env struct {
	// Name is what commands address: /Name.
	Name string
	// Login is the bot's own account on the repository's forge.
	Login  string
	DryRun bool
	Forge  forge.Forge
	Repo   forge.Repo
	// Directory is where the repository's packages live (kptbot.yaml
	// spec.directory).
	Directory string
	Rules     review.Rules
	// NoLabels: changes are opened without labels (the server's single
	// write mode on GitHub, whose create call takes none: they would be a
	// second write).
	NoLabels bool
}

// Answer runs commands cmds of comment cm on change number, in order, and
// returns the reply to post (mentioning the comment's author; "" for none)
// and the commands' errors. It marks the comment 👀 first.
func Answer(ctx context.Context, env Env, b Bot, number int, cm forge.Comment, cmds []review.Command) (string, error) {
	a := answer{env: env, bot: b}
	if !env.DryRun {
		if err := env.Forge.React(ctx, env.Repo, number, cm.ID, "eyes"); err != nil && !errors.Is(err, forge.ErrNotFound) {
			return "", err
		}
	}
	var replies []string
	var errs []error
	for _, c := range cmds {
		msg, err := a.run(ctx, number, cm, c)
		if err != nil {
			errs = append(errs, err)
			msg = "❌ `" + string(c.Verb) + "` failed: " + UserMessage(err)
		}
		if msg != "" {
			replies = append(replies, msg)
		}
	}
	if len(replies) == 0 {
		return "", errors.Join(errs...)
	}
	return "@" + cm.Author.Login + " " + strings.Join(replies, "\n\n"), errors.Join(errs...)
}

// UserMessage is what a PR comment may say about an error: the sentinel's
// meaning, never internal detail such as URLs that could hold credentials.
func UserMessage(err error) string {
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

// answer is one comment's commands being run.
type answer struct {
	env Env
	bot Bot
}

// run executes one command of comment cm; the returned text is the reply.
func (a answer) run(ctx context.Context, number int, cm forge.Comment, c review.Command) (string, error) {
	who, env := cm.Author, a.env
	if c.Verb == "" {
		msg := fmt.Sprintf("%s is not a %s command.", review.Code(c.Unknown), env.Name)
		if c.Suggest != "" {
			msg += fmt.Sprintf(" Did you mean `/%s %s`?", env.Name, c.Suggest)
		}
		return msg + "\n\n" + review.HelpText(env.Name), nil
	}
	if c.Verb == review.VerbHelp {
		return review.HelpText(env.Name), nil
	}
	perm, err := env.Forge.Permission(ctx, env.Repo, who.Login)
	if err != nil {
		return "", err
	}
	if perm != forge.PermissionWrite && perm != forge.PermissionAdmin {
		return fmt.Sprintf("🚫 `%s` needs write permission on %s; @%s has %s.", c.Verb, env.Repo.FullName, who.Login, perm), nil
	}
	ch, err := env.Forge.GetChange(ctx, env.Repo, number)
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
		if err := a.bot.SetDraft(ctx, ch, false); err != nil {
			return "", err
		}
		return "Proposed: ready for review.", a.bot.Sync(ctx, number)
	case review.VerbReject:
		// Whoever rejects withdraws their own command approval.
		if err := RevokeApprovals(ctx, env, a.bot, ch.Number, who.Login); err != nil {
			return "", err
		}
		if ch.Draft {
			return "Already a draft.", nil
		}
		return "Rejected: back to draft.", a.bot.SetDraft(ctx, ch, true)
	case review.VerbApprove:
		return a.approveCommand(ctx, ch, cm, c.Args)
	case review.VerbRender:
		return "Rendered again; see the checks.", a.bot.Sync(ctx, number)
	case review.VerbPause, review.VerbResume:
		return a.setPaused(ctx, ch, c.Verb == review.VerbPause)
	case review.VerbDelete:
		if len(c.Args) != 1 {
			return fmt.Sprintf("Usage: `/%s delete PACKAGE`.", env.Name), nil
		}
		// Whoever asked counts as the deletion's author, so they cannot
		// approve it alone.
		return a.bot.ProposeDeletion(ctx, strings.Trim(c.Args[0], "/"), who.Login)
	case review.VerbUpdate, review.VerbRecreate:
		m, ok := review.ParseMarker(ch.Body)
		if !ok || m.Variant == "" || !review.IsSelf(ch.Author, env.Login) {
			return fmt.Sprintf("`%s` applies to update changes kptbot opened for package variants; this change is not one.", c.Verb), nil
		}
		rev := ""
		if len(c.Args) > 0 {
			rev = c.Args[0]
		}
		// The bot will write content on who's request: who counts as an
		// author of what follows.
		if err := addRequester(ctx, a.bot, ch, who.Login); err != nil {
			return "", err
		}
		return a.bot.UpdateVariant(ctx, ch, m, c.Verb == review.VerbRecreate, rev)
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
func (a answer) approveCommand(ctx context.Context, ch forge.Change, cm forge.Comment, args []string) (string, error) {
	who, env := cm.Author, a.env
	var msg, sha string
	approved := false
	err := a.bot.EditRecord(ctx, ch, func(st *review.State, comments []forge.Comment) (bool, error) {
		var refusal string
		sha, refusal = review.ApprovedHead(*st, ch.HeadSHA, cm.ID, args, env.Name)
		if refusal != "" {
			msg = refusal
			return true, nil
		}
		c := review.Change{Head: ch.HeadSHA, Author: ch.Author.Login, Draft: ch.Draft}
		switch review.Excluded(who.Login, sha, c, *st, env.Rules, env.Login) {
		case review.ExcludedBot:
			return false, nil // the bot's own comments are never commands
		case review.ExcludedAuthor:
			msg = fmt.Sprintf("🚫 @%s authored this change and cannot approve it.", who.Login)
			return false, nil
		case review.ExcludedRequester:
			msg = fmt.Sprintf("🚫 @%s requested this change by command, which makes them its author: they cannot approve it.", who.Login)
			return false, nil
		case review.ExcludedPusher:
			msg = fmt.Sprintf("🚫 @%s pushed that commit and cannot approve it.", who.Login)
			return false, nil
		}
		ok, err := a.bot.MayApprove(ctx, who.Login)
		if err != nil || !ok {
			msg = fmt.Sprintf("🚫 @%s is not an approver of %s (kptbot.yaml spec.approvals).", who.Login, env.Repo.FullName)
			return false, err
		}
		at := cm.CreatedAt
		for _, c := range comments {
			if c.ID == cm.ID && !c.CreatedAt.IsZero() {
				at = c.CreatedAt // the forge's record, as listed
			}
		}
		kept := st.Approvals[:0]
		for _, ap := range st.Approvals {
			if !review.SameLogin(ap.By, who.Login) {
				kept = append(kept, ap)
			}
		}
		st.Approvals = append(kept, review.CommandApproval{By: who.Login, SHA: sha, At: at})
		approved = true
		return true, nil
	})
	if err != nil {
		return "", err
	}
	if !approved {
		return msg, nil
	}
	msg = fmt.Sprintf("Approved `%s`.", review.Short(sha))
	if sha != ch.HeadSHA {
		msg += fmt.Sprintf(" The head is now `%s`: the approval counts for it only if the change is identical.", review.Short(ch.HeadSHA))
	}
	if ch.Draft {
		msg += " The change is still a draft: it publishes once proposed."
	}
	return msg, a.bot.Sync(ctx, ch.Number)
}

// RevokeApprovals drops login's /kptbot approve records on change number:
// on /kptbot reject, and when login revokes their approval on the forge.
func RevokeApprovals(ctx context.Context, env Env, b Bot, number int, login string) error {
	ch, err := env.Forge.GetChange(ctx, env.Repo, number)
	if err != nil {
		return err
	}
	return b.EditRecord(ctx, ch, func(st *review.State, _ []forge.Comment) (bool, error) {
		kept := st.Approvals[:0]
		for _, ap := range st.Approvals {
			if !review.SameLogin(ap.By, login) {
				kept = append(kept, ap)
			}
		}
		if len(kept) == len(st.Approvals) {
			return false, nil
		}
		st.Approvals = kept
		return true, nil
	})
}

func (a answer) setPaused(ctx context.Context, ch forge.Change, paused bool) (string, error) {
	if m, ok := review.ParseMarker(ch.Body); ok && m.Variant != "" && m.Paused != paused {
		// An update change: the marker stops the variant's updates.
		m.Paused = paused
		body := review.SetMarker(ch.Body, m)
		if _, err := a.env.Forge.UpdateChange(ctx, a.env.Repo, ch.Number, forge.ChangeUpdate{Body: &body}); err != nil {
			return "", err
		}
	}
	err := a.bot.EditRecord(ctx, ch, func(st *review.State, _ []forge.Comment) (bool, error) {
		st.Paused = paused
		return true, nil
	})
	if err != nil {
		return "", err
	}
	if paused {
		return "Paused: the bot will neither update nor publish this change.", nil
	}
	return "Resumed.", a.bot.Sync(ctx, ch.Number)
}
