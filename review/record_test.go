package review

import (
	"testing"

	"github.com/kptbot/kptbot/forge"
)

// TestNeedsRecord: the bot's own update change gets its status comment
// only once someone takes part; a person's change always gets one.
func TestNeedsRecord(t *testing.T) {
	for _, c := range []struct {
		name string
		in   RecordInput
		want bool
	}{
		{"a person's change", RecordInput{}, true},
		{"the bot's update, nobody took part", RecordInput{BotUpdate: true, State: State{Packages: []string{"ns"}, Digests: map[string]string{"h": "d"}}}, false},
		{"the bot's update, its own push recorded", RecordInput{BotUpdate: true}, false},
		{"someone commented", RecordInput{BotUpdate: true, OthersSpoke: true}, true},
		{"someone reviewed", RecordInput{BotUpdate: true, Reviewed: true}, true},
		{"someone pushed", RecordInput{BotUpdate: true, OthersPushed: true}, true},
		{"a refusal or limit to say", RecordInput{BotUpdate: true, Extra: true}, true},
		{"a requester", RecordInput{BotUpdate: true, State: State{Requesters: []string{"alice"}}}, true},
		{"a command approval", RecordInput{BotUpdate: true, State: State{Approvals: []CommandApproval{{By: "alice", SHA: "h"}}}}, true},
		{"a notice said", RecordInput{BotUpdate: true, State: State{Noticed: []string{"stale:x"}}}, true},
		{"paused", RecordInput{BotUpdate: true, State: State{Paused: true}}, true},
	} {
		if got := NeedsRecord(c.in); got != c.want {
			t.Errorf("%s: NeedsRecord = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRecordInputForTrustsOnlyTheBot: a comment or push by an account that
// only looks like the bot counts as someone else's, and a description
// marker makes a change the bot's only when the bot authored it.
func TestRecordInputForTrustsOnlyTheBot(t *testing.T) {
	const self = "kptbot[bot]"
	marker := FormatMarker(BodyMarker{Package: "ns", Variant: "v"})
	bot := forge.User{Login: self, Bot: true}
	fake := forge.User{Login: self} // a user account cannot carry the bot flag
	for _, c := range []struct {
		name     string
		ch       forge.Change
		comments []forge.Comment
		st       State
		want     bool
	}{
		{"the bot's update, only its own comments", forge.Change{Author: bot, Body: marker}, []forge.Comment{{Author: bot}}, State{}, false},
		{"a look-alike commented", forge.Change{Author: bot, Body: marker}, []forge.Comment{{Author: fake}}, State{}, true},
		{"a look-alike authored it", forge.Change{Author: fake, Body: marker}, nil, State{}, true},
		{"the bot's change without a variant marker", forge.Change{Author: bot, Body: "x"}, nil, State{}, true},
		{"someone else pushed", forge.Change{Author: bot, Body: marker}, nil, State{Pushers: map[string]string{"h": "mallory"}}, true},
	} {
		if got := NeedsRecord(RecordInputFor(c.ch, c.comments, c.st, self)); got != c.want {
			t.Errorf("%s: NeedsRecord = %v, want %v", c.name, got, c.want)
		}
	}
}
