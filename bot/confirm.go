package bot

import (
	"context"
	"errors"
	"strings"

	"github.com/kptbot/kptbot/forge"
)

// confirmComment replaces ev's comment by the forge's own record of it
// when the adapter can read one back. It returns why the comment is not
// acted on ("" when it is): gone from the forge, written by someone other
// than the delivery says, or with other text (edited since, or never
// written so), or by a bot.
func (b *Bot) confirmComment(ctx context.Context, ev *forge.Event) (string, error) {
	f, err := b.forgeFor(ctx, ev.Repo)
	if err != nil {
		return "", err
	}
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
		b.log.Warn("comment delivery does not match the forge; not acting on it", "repo", ev.Repo.FullName,
			"change", ev.Change.Number, "comment", ev.Comment.ID, "why", why)
		return "the comment delivered is not the comment on the forge: " + why, nil
	}
	if sameLogin(got.Author.Login, b.login(ev.Repo.Forge)) || got.Author.Bot {
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
