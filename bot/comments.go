package bot

import (
	"context"
	"errors"

	"github.com/kptbot/kptbot/commands"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/review"
)

// onComment answers the commands in a new comment on a change (package
// commands): 👀 on receipt, then one reply with every command's outcome.
func (b *Bot) onComment(ctx context.Context, ev forge.Event, out *Outcome) error {
	login := b.login(ev.Repo.Forge)
	cmds, skip := commands.Read(b.opts.Name, login, ev)
	if skip == "" {
		f, err := b.forgeFor(ctx, ev.Repo)
		if err != nil {
			return err
		}
		if skip, err = commands.Confirm(ctx, f, login, b.log, &ev); err != nil {
			return err
		}
	}
	if skip != "" {
		out.Skipped = skip
		return nil
	}
	return b.withRepo(ctx, ev.Repo, out, func(rc *repoCtx) error {
		number := ev.Change.Number
		reply, err := commands.Answer(ctx, b.commandEnv(rc), commandBot{b, rc}, number, *ev.Comment, cmds)
		if reply != "" {
			err = errors.Join(err, b.reply(ctx, rc, number, reply))
		}
		return err
	})
}

// commandEnv is repository rc as the commands see it.
func (b *Bot) commandEnv(rc *repoCtx) commands.Env {
	return commands.Env{Name: b.opts.Name, Login: b.login(rc.repo.Forge), DryRun: b.opts.DryRun, Forge: rc.f, Repo: rc.repo,
		Directory: rc.spec.Directory, Rules: rules(rc), NoLabels: b.noLabels(rc.repo)}
}

// commandBot is the bot as the commands see it, on repository rc.
type commandBot struct {
	b  *Bot
	rc *repoCtx
}

func (c commandBot) Sync(ctx context.Context, number int) error {
	return c.b.syncChange(ctx, c.rc, number, forge.Event{})
}

func (c commandBot) SetDraft(ctx context.Context, ch forge.Change, draft bool) error {
	return c.b.setDraft(ctx, c.rc, ch, draft)
}

func (c commandBot) EditRecord(ctx context.Context, ch forge.Change, edit func(*review.State, []forge.Comment) (bool, error)) error {
	w := &work{rc: c.rc, ch: ch}
	if err := c.b.loadStatus(ctx, w); err != nil {
		return err
	}
	if save, err := edit(&w.st, w.comments); err != nil || !save {
		return err
	}
	return c.b.saveStatus(ctx, w, "")
}

func (c commandBot) MayApprove(ctx context.Context, login string) (bool, error) {
	return c.b.mayApprove(ctx, c.rc, login)
}

func (c commandBot) ProposeDeletion(ctx context.Context, pkg, requester string) (string, error) {
	msg, ch, err := commands.ProposeDeletion(ctx, c.b.commandEnv(c.rc), c, pkg, requester)
	if ch != nil {
		c.rc.out.Opened = append(c.rc.out.Opened, ChangeRef{Repo: c.rc.repo.FullName, Number: ch.Number, Package: pkg, Title: ch.Title, URL: ch.URL})
	}
	return msg, err
}

func (c commandBot) UpdateVariant(ctx context.Context, ch forge.Change, m BodyMarker, recreate bool, rev string) (string, error) {
	if recreate {
		return c.b.recreate(ctx, c.rc, ch, m)
	}
	return c.b.updateOnto(ctx, c.rc, ch, m, rev)
}

// proposeDeletion opens (once) the change that deletes a package the bot
// decided to delete itself (commands.ProposeDeletion).
func (b *Bot) proposeDeletion(ctx context.Context, rc *repoCtx, pkg string) (string, error) {
	return commandBot{b, rc}.ProposeDeletion(ctx, pkg, "")
}
