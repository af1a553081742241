package review

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kptbot/kptbot/forge"
)

// TestParseStateAnchored: only the marker that ends a status comment is
// the record; one echoed earlier (a package name, a quote) is not.
func TestParseStateAnchored(t *testing.T) {
	real := State{Approvals: []CommandApproval{{By: "alice", SHA: "aaa"}}}.Render(StatusHeader + "\n\nsummary")
	forged := `<!-- kptbot-state: {"approvals":[{"by":"carol","sha":"bbb"}]} -->`
	cases := []struct {
		name   string
		body   string
		ok     bool
		approv string
	}{
		{"rendered", real, true, "alice"},
		{"forged marker echoed before the real one", strings.Replace(real, "summary", forged, 1), true, "alice"},
		{"forged marker after the real one but not the header", forged, false, ""},
		{"no header", strings.TrimPrefix(real, StatusHeader), false, ""},
		{"text after the marker", real + "\nmore", false, ""},
		{"trailing whitespace", real + "\n\n", true, "alice"},
		{"a reply that ends with a forged marker", "@mallory `x` is not a command " + forged, false, ""},
		{"header then forged marker", StatusHeader + " " + forged, true, "carol"}, // only the bot writes the header
		{"marker with trailing JSON", StatusHeader + "\n<!-- kptbot-state: {} {} -->", false, ""},
		{"not an object", StatusHeader + "\n<!-- kptbot-state: [] -->", false, ""},
	}
	for _, c := range cases {
		st, ok := ParseState(c.body)
		got := ""
		if len(st.Approvals) > 0 {
			got = st.Approvals[0].By
		}
		if ok != c.ok || got != c.approv {
			t.Errorf("%s: ParseState = %v approvals by %q, want %v %q", c.name, ok, got, c.ok, c.approv)
		}
	}
}

func TestUserText(t *testing.T) {
	for in, want := range map[string]string{
		"pkgs/ns":      "pkgs/ns",
		"<!-- x -->":   "&lt;!-- x --&gt;",
		"a`b|c\nd@e":   "a&#96;b&#124;c d&#64;e",
		"\x00\x1b[31m": "[31m",
		"x\u2028y":     "x y",
		`"'&\`:         "&quot;&#39;&amp;&#92;",
	} {
		if got := UserText(in); got != want {
			t.Errorf("UserText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsSelf(t *testing.T) {
	cases := []struct {
		u    forge.User
		self string
		want bool
	}{
		{forge.User{Login: "kptbot[bot]", Bot: true}, "kptbot[bot]", true},
		{forge.User{Login: "KptBot[bot]", Bot: true}, "kptbot[bot]", true},
		{forge.User{Login: "kptbot", Bot: false}, "kptbot[bot]", false},      // a user named like the App's slug
		{forge.User{Login: "kptbot", Bot: true}, "kptbot[bot]", false},       // suffix is part of the login
		{forge.User{Login: "kptbot[bot]", Bot: false}, "kptbot[bot]", false}, // no bot flag
		{forge.User{Login: "project_7_bot_1", Bot: true}, "project_7_bot_1", true},
		{forge.User{Login: "project_7_bot_1"}, "project_7_bot_1", true}, // GitLab: usernames are unique
		{forge.User{Login: ""}, "", false},
	}
	for _, c := range cases {
		if got := IsSelf(c.u, c.self); got != c.want {
			t.Errorf("IsSelf(%+v, %q) = %v, want %v", c.u, c.self, got, c.want)
		}
	}
}

func TestHeadForComment(t *testing.T) {
	heads := []HeadSeen{{SHA: "a", After: 10}, {SHA: "b", After: 20}}
	cases := []struct {
		current string
		id      int64
		ok      bool
	}{
		{"b", 21, true},  // written after the bot saw b
		{"b", 20, false}, // existed when b was first seen: may predate it
		{"b", 15, false}, // written while a was the head
		{"c", 99, false}, // the bot has not seen c yet
		{"b", 0, false},  // no comment ID
	}
	for _, c := range cases {
		if _, ok := HeadForComment(heads, c.current, c.id); ok != c.ok {
			t.Errorf("HeadForComment(current %s, id %d) = %v, want %v", c.current, c.id, ok, c.ok)
		}
	}
	if _, ok := HeadForComment(nil, "a", 5); ok {
		t.Error("no history: must not guess")
	}
}

func TestApprovedHead(t *testing.T) {
	cur := "0123456789abcdef0123456789abcdef01234567"
	old := "fedcba9876543210fedcba9876543210fedcba98"
	st := State{Heads: []HeadSeen{{SHA: old, After: 1}, {SHA: cur, After: 5}}}
	cases := []struct {
		id      int64
		args    []string
		want    string
		refused bool
	}{
		{6, nil, cur, false},
		{5, nil, "", true},
		{3, []string{cur[:7]}, cur, false},
		{3, []string{old}, old, false},
		{3, []string{"abc"}, "", true},
		{3, []string{"zzzzzzz"}, "", true},
		{3, []string{"1111111"}, "", true},
	}
	for _, c := range cases {
		sha, refusal := ApprovedHead(st, cur, c.id, c.args, "kptbot")
		if sha != c.want || (refusal != "") != c.refused {
			t.Errorf("ApprovedHead(id %d, %v) = %q, %q; want %q refused=%v", c.id, c.args, sha, refusal, c.want, c.refused)
		}
	}
}

func TestLatestApprovals(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	rv := func(login string, st forge.ReviewState, s int) forge.Review {
		r := forge.Review{Reviewer: forge.User{Login: login}, State: st, CommitSHA: "h"}
		if s >= 0 {
			r.SubmittedAt = at(s)
		}
		return r
	}
	cases := []struct {
		name    string
		reviews []forge.Review
		cmds    []CommandApproval
		want    []string
	}{
		{"command then later changes requested", []forge.Review{rv("alice", forge.ReviewChangesRequested, 10)}, []CommandApproval{{By: "alice", SHA: "h", At: at(5)}}, nil},
		{"changes requested then later command", []forge.Review{rv("alice", forge.ReviewChangesRequested, 5)}, []CommandApproval{{By: "alice", SHA: "h", At: at(10)}}, []string{"alice"}},
		{"approve then dismissed", []forge.Review{rv("bob", forge.ReviewApproved, 1), rv("bob", forge.ReviewDismissed, 2)}, nil, nil},
		{"command without a time is oldest", []forge.Review{rv("alice", forge.ReviewChangesRequested, 1)}, []CommandApproval{{By: "alice", SHA: "h"}}, nil},
		{"review without a time is newest", []forge.Review{rv("alice", forge.ReviewChangesRequested, -1)}, []CommandApproval{{By: "alice", SHA: "h", At: at(50)}}, nil},
		{"same second: the review wins", []forge.Review{rv("alice", forge.ReviewChangesRequested, 7)}, []CommandApproval{{By: "alice", SHA: "h", At: at(7)}}, nil},
		{"two people", []forge.Review{rv("bob", forge.ReviewApproved, 3)}, []CommandApproval{{By: "alice", SHA: "h", At: at(2)}}, []string{"alice", "bob"}},
		{"case-insensitive logins", []forge.Review{rv("Alice", forge.ReviewChangesRequested, 9)}, []CommandApproval{{By: "alice", SHA: "h", At: at(2)}}, nil},
	}
	for _, c := range cases {
		var got []string
		for _, a := range Latest(c.reviews, c.cmds) {
			got = append(got, a.Login)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: approvals %v, want %v", c.name, got, c.want)
		}
	}
}

// FuzzParseState: the state parser never panics, and whatever it accepts
// is a body that ends with the marker it read and begins with the header;
// a record the bot renders always reads back, whatever summary text (user
// text escaped) precedes it.
func FuzzParseState(f *testing.F) {
	f.Add(StatusHeader+"\n\n<!-- kptbot-state: {\"approvals\":[{\"by\":\"a\",\"sha\":\"b\"}]} -->", "pkgs/ns")
	f.Add("<!-- kptbot-state: {} -->", "<!-- kptbot-state: {\"paused\":true} -->")
	f.Add(StatusHeader+"<!-- kptbot-state: {\"a\":\"-->\"} -->", "`\n")
	f.Fuzz(func(t *testing.T, body, name string) {
		if st, ok := ParseState(body); ok {
			trimmed := strings.TrimRight(body, " \t\r\n")
			if !strings.HasPrefix(trimmed, StatusHeader) || !strings.HasSuffix(trimmed, markerClose) {
				t.Fatalf("accepted a body that is not a status comment: %q", body)
			}
			_ = st
		}
		if !utf8.ValidString(name) {
			return // JSON replaces invalid UTF-8; names come from git paths and are valid
		}
		want := State{Packages: []string{name}, Paused: true}
		rendered := want.Render(StatusHeader + "\n\n| " + Code(name) + " |\n" + UserText(name))
		got, ok := ParseState(rendered)
		if !ok || !got.Paused || len(got.Packages) != 1 || got.Packages[0] != name || len(got.Approvals) != 0 {
			t.Fatalf("the bot's own record did not read back with name %q: %+v, %v\n%s", name, got, ok, rendered)
		}
	})
}
