package commands

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
)

func TestRead(t *testing.T) {
	change := &forge.Change{Number: 7}
	comment := func(author forge.User, body string, edited bool) *forge.Comment {
		return &forge.Comment{ID: 1, Author: author, Body: body, Edited: edited}
	}
	alice := forge.User{ID: 10, Login: "alice"}
	for _, tc := range []struct {
		name string
		ev   forge.Event
		cmds int
		skip string
	}{
		{"a command", forge.Event{Change: change, Comment: comment(alice, "/kptbot approve", false)}, 1, ""},
		{"two commands", forge.Event{Change: change, Comment: comment(alice, "/kptbot render\n/kptbot approve", false)}, 2, ""},
		{"no change", forge.Event{Comment: comment(alice, "/kptbot approve", false)}, 0, "comment event without a comment on a change"},
		{"edited", forge.Event{Change: change, Comment: comment(alice, "/kptbot approve", true)}, 0, "edited comments are never read as commands"},
		{"the bot itself", forge.Event{Change: change, Comment: comment(forge.User{Login: "Project_42_Bot"}, "/kptbot approve", false)}, 0, "comment by a bot"},
		{"another bot", forge.Event{Change: change, Comment: comment(forge.User{Login: "ci", Bot: true}, "/kptbot approve", false)}, 0, "comment by a bot"},
		{"no command", forge.Event{Change: change, Comment: comment(alice, "looks good", false)}, 0, "comment holds no command"},
		{"another bot's command", forge.Event{Change: change, Comment: comment(alice, "/otherbot approve", false)}, 0, "comment holds no command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmds, skip := Read("kptbot", "project_42_bot", tc.ev) // a GitLab bot user: no Bot flag
			if len(cmds) != tc.cmds || skip != tc.skip {
				t.Errorf("Read = %d commands, skip %q; want %d, %q", len(cmds), skip, tc.cmds, tc.skip)
			}
		})
	}
}

func TestCommentMismatch(t *testing.T) {
	alice := forge.User{ID: 10, Login: "alice"}
	for _, tc := range []struct {
		name              string
		delivered, stored forge.Comment
		want              string
	}{
		{"same", forge.Comment{Author: alice, Body: "/kptbot approve"}, forge.Comment{Author: alice, Body: "/kptbot approve"}, ""},
		{"line endings", forge.Comment{Author: alice, Body: "a\r\nb"}, forge.Comment{Author: alice, Body: "a\nb"}, ""},
		{"login case", forge.Comment{Author: forge.User{Login: "Alice"}, Body: "x"}, forge.Comment{Author: alice, Body: "x"}, ""},
		{"no stored author", forge.Comment{Author: alice, Body: "x"}, forge.Comment{Body: "x"}, "the forge names no author"},
		{"other id", forge.Comment{Author: forge.User{ID: 11, Login: "alice"}, Body: "x"}, forge.Comment{Author: alice, Body: "x"}, "another author"},
		{"other login", forge.Comment{Author: forge.User{Login: "mallory"}, Body: "x"}, forge.Comment{Author: alice, Body: "x"}, "another author"},
		{"other text", forge.Comment{Author: alice, Body: "/kptbot approve"}, forge.Comment{Author: alice, Body: "/kptbot reject"}, "other text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := commentMismatch(tc.delivered, tc.stored); got != tc.want {
				t.Errorf("commentMismatch = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestUserMessageHidesDetail: what a reply says of an error is the
// sentinel's meaning, never the wrapped detail (a URL may hold a token).
func TestUserMessageHidesDetail(t *testing.T) {
	const secret = "https://x-access-token:ghs_secret@github.com/o/r"
	for _, sentinel := range []error{forge.ErrConflict, forge.ErrPermission, forge.ErrRateLimited, forge.ErrNotFound, errors.New("boom")} {
		msg := UserMessage(fmt.Errorf("pushing to %s: %w", secret, sentinel))
		if msg == "" || strings.Contains(msg, "ghs_secret") || strings.Contains(msg, "github.com") {
			t.Errorf("UserMessage(%v) = %q", sentinel, msg)
		}
	}
	if UserMessage(fmt.Errorf("x: %w", forge.ErrConflict)) == UserMessage(errors.New("x")) {
		t.Error("a conflict reads like an internal error")
	}
}
