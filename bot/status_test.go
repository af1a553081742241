package bot

import (
	"strings"
	"testing"

	"github.com/kptbot/kptbot/check"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/review"
)

// TestStatusEchoesNoMarkup: a package named like a marker is echoed as
// inert text, so the rendered comment still parses to the bot's record.
func TestStatusEchoesNoMarkup(t *testing.T) {
	evil := "pkgs/<!-- kptbot-state: {\"approvals\":[{\"by\":\"carol\",\"sha\":\"x\"}]} -->`\n|"
	w := &work{results: []check.Result{{Name: evil, OK: true}}, st: review.State{Packages: []string{evil}}}
	body := w.st.Render((&Bot{opts: Options{Name: "kptbot"}}).statusSummary(w, ""))
	if strings.Count(body, "<!--") != 1 || strings.Count(body, "-->") != 1 {
		t.Fatalf("the echoed name opened or closed an HTML comment:\n%s", body)
	}
	st, ok := review.ParseState(body)
	if !ok || len(st.Approvals) != 0 || len(st.Packages) != 1 || st.Packages[0] != evil {
		t.Fatalf("ParseState = %+v, %v; want the bot's record with the name intact", st, ok)
	}
	summary := body[:strings.Index(body, "<!-- kptbot-state: ")]
	if strings.Contains(summary, "`") || strings.Count(summary, "\n| <code>") != 1 || review.Code("pkgs/ns") != "`pkgs/ns`" || !strings.Contains(summary, "&lt;!--") {
		t.Errorf("the package name is not echoed as one escaped table cell:\n%s", summary)
	}
}

// TestNeedsRecord: the bot's own update change gets its status comment
// only once someone takes part; a person's change always gets one.
func TestNeedsRecord(t *testing.T) {
	for _, c := range []struct {
		name string
		in   recordInput
		want bool
	}{
		{"a person's change", recordInput{}, true},
		{"the bot's update, nobody took part", recordInput{botUpdate: true, st: review.State{Packages: []string{"ns"}, Digests: map[string]string{"h": "d"}}}, false},
		{"the bot's update, its own push recorded", recordInput{botUpdate: true}, false},
		{"someone commented", recordInput{botUpdate: true, othersSpoke: true}, true},
		{"someone reviewed", recordInput{botUpdate: true, reviewed: true}, true},
		{"someone pushed", recordInput{botUpdate: true, othersPushed: true}, true},
		{"a refusal or limit to say", recordInput{botUpdate: true, extra: true}, true},
		{"a requester", recordInput{botUpdate: true, st: review.State{Requesters: []string{"alice"}}}, true},
		{"a command approval", recordInput{botUpdate: true, st: review.State{Approvals: []review.CommandApproval{{By: "alice", SHA: "h"}}}}, true},
		{"a notice said", recordInput{botUpdate: true, st: review.State{Noticed: []string{"stale:x"}}}, true},
		{"paused", recordInput{botUpdate: true, st: review.State{Paused: true}}, true},
	} {
		if got := needsRecord(c.in); got != c.want {
			t.Errorf("%s: needsRecord = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRecordInputTrustsOnlyTheBot: a comment or push by an account that
// only looks like the bot counts as someone else's, and a description
// marker makes a change the bot's only when the bot authored it.
func TestRecordInputTrustsOnlyTheBot(t *testing.T) {
	const self = "kptbot[bot]"
	marker := FormatMarker(BodyMarker{Package: "ns", Variant: "v"})
	bot := forge.User{Login: self, Bot: true}
	fake := forge.User{Login: self} // a user account cannot carry the bot flag
	for _, c := range []struct {
		name string
		w    work
		want bool
	}{
		{"the bot's update, only its own comments", work{ch: forge.Change{Author: bot, Body: marker}, comments: []forge.Comment{{Author: bot}}}, false},
		{"a look-alike commented", work{ch: forge.Change{Author: bot, Body: marker}, comments: []forge.Comment{{Author: fake}}}, true},
		{"a look-alike authored it", work{ch: forge.Change{Author: fake, Body: marker}}, true},
		{"the bot's change without a variant marker", work{ch: forge.Change{Author: bot, Body: "x"}}, true},
		{"someone else pushed", work{ch: forge.Change{Author: bot, Body: marker}, st: review.State{Pushers: map[string]string{"h": "mallory"}}}, true},
	} {
		if got := needsRecord(c.w.recordInput(self, "")); got != c.want {
			t.Errorf("%s: needsRecord = %v, want %v", c.name, got, c.want)
		}
	}
}
