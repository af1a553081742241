package commands

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/review"
)

// Read returns the commands of a new comment on a change addressed to
// /name, and why the comment is not answered ("" when it is): not a comment
// on a change, edited, written by a bot (login is the bot's own account on
// the event's forge), or holding no command. It reads nothing from the
// forge; Confirm does.
func Read(name, login string, ev forge.Event) ([]review.Command, string) {
	if ev.Comment == nil || ev.Change == nil {
		return nil, "comment event without a comment on a change"
	}
	if ev.Comment.Edited {
		return nil, "edited comments are never read as commands"
	}
	if review.IsSelf(ev.Comment.Author, login) || ev.Comment.Author.Bot {
		return nil, "comment by a bot"
	}
	cmds := review.ParseCommands(name, ev.Comment.Body)
	if len(cmds) == 0 {
		return nil, "comment holds no command"
	}
	return cmds, ""
}

// Confirm replaces ev's comment by the forge's own record of it when the
// adapter can read one back. It returns why the comment is not acted on
// ("" when it is): gone from the forge, written by someone other than the
// delivery says, or with other text (edited since, or never written so),
// or by a bot.
func Confirm(ctx context.Context, f forge.Forge, login string, log *slog.Logger, ev *forge.Event) (string, error) {
	// forge.CommentReader says which adapters must read comments back.
	got, err := f.ReadComment(ctx, ev.Repo, ev.Change.Number, ev.Comment.ID)
	if errors.Is(err, forge.ErrNotSupported) {
		return "", nil
	}
	if errors.Is(err, forge.ErrNotFound) {
		return "the comment is not on the forge (deleted, or never written)", nil
	}
	if err != nil {
		return "", err
	}
	if why := commentMismatch(*ev.Comment, got); why != "" {
		log.Warn("comment delivery does not match the forge; not acting on it", "repo", ev.Repo.FullName,
			"change", ev.Change.Number, "comment", ev.Comment.ID, "why", why)
		return "the comment delivered is not the comment on the forge: " + why, nil
	}
	if review.SameLogin(got.Author.Login, login) || got.Author.Bot {
		return "comment by a bot", nil
	}
	got.Edited = ev.Comment.Edited
	ev.Comment, ev.Sender = &got, got.Author
	return "", nil
}

// commentMismatch says how a delivered comment differs from the forge's
// record of it, "" when it does not: the author must be the same user and
// the text the same text.
func commentMismatch(delivered, stored forge.Comment) string {
	d, s := delivered.Author, stored.Author
	switch {
	case s.ID == 0 && s.Login == "":
		return "the forge names no author"
	case d.ID != 0 && d.ID != s.ID, d.Login != "" && !strings.EqualFold(d.Login, s.Login):
		return "another author"
	case strings.ReplaceAll(delivered.Body, "\r", "") != strings.ReplaceAll(stored.Body, "\r", ""):
		return "other text"
	}
	return ""
}
