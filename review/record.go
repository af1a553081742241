package review

import "github.com/kptbot/kptbot/forge"

// RecordInput is a change without a status comment, as NeedsRecord
// weighs it.
type RecordInput struct {
	State State
	// BotUpdate: the change is one of the bot's own variant update
	// changes (IsBotUpdate).
	BotUpdate bool
	// OthersSpoke: someone other than the bot commented on the change;
	// Reviewed: it has reviews; OthersPushed: a head was pushed by
	// someone other than the bot.
	OthersSpoke, Reviewed, OthersPushed bool
	// Extra: the summary has something to tell people (a refused
	// approval, a limit).
	Extra bool
}

// RecordInputFor is what NeedsRecord weighs of change ch, its comments
// and its state, for the bot's account self.
func RecordInputFor(ch forge.Change, comments []forge.Comment, st State, self string) RecordInput {
	in := RecordInput{State: st, BotUpdate: IsBotUpdate(ch, self)}
	for _, c := range comments {
		in.OthersSpoke = in.OthersSpoke || !IsSelf(c.Author, self)
	}
	for _, p := range st.Pushers {
		in.OthersPushed = in.OthersPushed || !SameLogin(p, self)
	}
	return in
}

// IsBotUpdate reports whether ch is one of the bot's own variant update
// changes: authored by the bot, its description naming a variant. The
// marker is read only once the author is known to be the bot.
func IsBotUpdate(ch forge.Change, self string) bool {
	if !IsSelf(ch.Author, self) {
		return false
	}
	m, ok := ParseMarker(ch.Body)
	return ok && m.Variant != ""
}

// NeedsRecord decides whether a change that has no status comment yet
// gets one. A person's change always does (its pushers, digests and
// packages are the record). The bot's own update change needs one only
// once people take part: its digests and heads matter only to approvals,
// commands and pushes by others, each of which brings the change to the
// bot again with that person's comment, review or push visible, and the
// record then begins with the head as it is at that moment (a later
// first sight is only more cautious: a bare "/kptbot approve" written
// before it must name the commit). Until then the description and the
// check say everything, and a resync writes nothing.
func NeedsRecord(in RecordInput) bool {
	st := in.State
	switch {
	case !in.BotUpdate, in.OthersSpoke, in.Reviewed, in.OthersPushed, in.Extra:
		return true
	case len(st.Requesters) > 0, len(st.Approvals) > 0, len(st.Noticed) > 0, st.Paused:
		return true
	}
	return false
}
