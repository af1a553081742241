package review

import (
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
)

func approved(login, sha string, at int) forge.Review {
	return forge.Review{State: forge.ReviewApproved, Reviewer: forge.User{Login: login}, CommitSHA: sha,
		SubmittedAt: time.Date(2026, 1, 1, 0, 0, at, 0, time.UTC)}
}

func TestDecide(t *testing.T) {
	base := func() Input {
		return Input{
			Change:    Change{Head: "h2", Author: "dana"},
			Bot:       "kptbot[bot]",
			Approvers: map[string]bool{"alice": true, "bob": true, "dana": true, "erin": true, "kptbot[bot]": true},
			Rendered:  true,
			State:     State{Digests: map[string]string{"h1": "d", "h2": "d", "h0": "other"}},
		}
	}
	cases := []struct {
		name      string
		edit      func(*Input)
		valid     string
		stale     string
		refused   string
		approved  bool
		publish   bool
		candidate string
	}{
		{"one approval of the head publishes", func(in *Input) { in.Reviews = []forge.Review{approved("alice", "h2", 1)} },
			"alice", "", "", true, true, "alice"},
		{"no approval", func(in *Input) {}, "", "", "", false, false, ""},
		{"the author's own approval", func(in *Input) { in.Reviews = []forge.Review{approved("Dana", "h2", 1)} },
			"", "", "@Dana authored the change", false, false, ""},
		{"the author may when the rules say so", func(in *Input) {
			in.Reviews = []forge.Review{approved("dana", "h2", 1)}
			in.Rules.AllowAuthor = true
		}, "dana", "", "", true, true, "dana"},
		{"a command requester is an author", func(in *Input) {
			in.State.Requesters = []string{"erin"}
			in.Reviews = []forge.Review{approved("erin", "h2", 1)}
		}, "", "", "@erin requested the change by command, which makes them its author", false, false, ""},
		{"the pusher of the head", func(in *Input) {
			in.State.Pushers = map[string]string{"h2": "bob"}
			in.Reviews = []forge.Review{approved("bob", "h2", 1)}
		}, "", "", "@bob pushed the head commit", false, false, ""},
		{"the pusher of an earlier head may approve this one", func(in *Input) {
			in.State.Pushers = map[string]string{"h1": "bob"}
			in.Reviews = []forge.Review{approved("bob", "h2", 1)}
		}, "bob", "", "", true, true, "bob"},
		{"the bot's own word is ignored silently", func(in *Input) { in.Reviews = []forge.Review{approved("kptbot[bot]", "h2", 1)} },
			"", "", "", false, false, ""},
		{"not an approver", func(in *Input) { in.Reviews = []forge.Review{approved("mallory", "h2", 1)} },
			"", "", "@mallory is not an approver", false, false, "mallory"},
		{"an earlier head with the same change counts", func(in *Input) { in.Reviews = []forge.Review{approved("alice", "h1", 1)} },
			"alice", "", "", true, true, "alice"},
		{"an earlier head with another change is stale", func(in *Input) { in.Reviews = []forge.Review{approved("alice", "h0", 1)} },
			"", "alice@h0", "", false, false, "alice"},
		{"a head the bot never digested is stale", func(in *Input) { in.Reviews = []forge.Review{approved("alice", "hx", 1)} },
			"", "alice@hx", "", false, false, "alice"},
		{"a later changes-requested review revokes a command approval", func(in *Input) {
			in.State.Approvals = []CommandApproval{{By: "alice", SHA: "h2", At: time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)}}
			in.Reviews = []forge.Review{{State: forge.ReviewChangesRequested, Reviewer: forge.User{Login: "alice"}, SubmittedAt: time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC)}}
		}, "", "", "", false, false, ""},
		{"a command approval counts", func(in *Input) {
			in.State.Approvals = []CommandApproval{{By: "bob", SHA: "h2"}}
		}, "bob", "", "", true, true, "bob"},
		{"minimum two, one given", func(in *Input) {
			in.Rules.Minimum = 2
			in.Reviews = []forge.Review{approved("alice", "h2", 1)}
		}, "alice", "", "", false, false, "alice"},
		{"minimum two, two given", func(in *Input) {
			in.Rules.Minimum = 2
			in.Reviews = []forge.Review{approved("alice", "h2", 1), approved("bob", "h2", 2)}
		}, "alice,bob", "", "", true, true, "alice,bob"},
		{"a draft is approved but not published", func(in *Input) {
			in.Change.Draft = true
			in.Reviews = []forge.Review{approved("alice", "h2", 1)}
		}, "alice", "", "", true, false, "alice"},
		{"a failed render blocks publish", func(in *Input) {
			in.Rendered = false
			in.Reviews = []forge.Review{approved("alice", "h2", 1)}
		}, "alice", "", "", true, false, "alice"},
		{"a paused change is not published", func(in *Input) {
			in.State.Paused = true
			in.Reviews = []forge.Review{approved("alice", "h2", 1)}
		}, "alice", "", "", true, false, "alice"},
	}
	for _, c := range cases {
		in := base()
		c.edit(&in)
		v := Decide(in)
		var stale []string
		for _, a := range v.Stale {
			stale = append(stale, a.Login+"@"+a.SHA)
		}
		if got := strings.Join(v.Valid, ","); got != c.valid {
			t.Errorf("%s: valid %q, want %q", c.name, got, c.valid)
		}
		if got := strings.Join(stale, ","); got != c.stale {
			t.Errorf("%s: stale %q, want %q", c.name, got, c.stale)
		}
		if got := strings.Join(v.Refused, "; "); got != c.refused {
			t.Errorf("%s: refused %q, want %q", c.name, got, c.refused)
		}
		if v.Approved != c.approved || v.Publish != c.publish {
			t.Errorf("%s: approved=%v publish=%v, want %v %v", c.name, v.Approved, v.Publish, c.approved, c.publish)
		}
		if got := strings.Join(Candidates(in), ","); got != c.candidate {
			t.Errorf("%s: candidates %q, want %q", c.name, got, c.candidate)
		}
	}
}

func TestExcluded(t *testing.T) {
	c := Change{Head: "h", Author: "dana"}
	st := State{Requesters: []string{"erin"}, Pushers: map[string]string{"h": "bob", "old": "carol"}}
	cases := []struct {
		login, sha  string
		allowAuthor bool
		want        Exclusion
	}{
		{"kptbot[bot]", "h", false, ExcludedBot},
		{"kptbot", "h", false, NotExcluded}, // a user named like the App is someone else
		{"DANA", "h", false, ExcludedAuthor},
		{"dana", "h", true, NotExcluded},
		{"erin", "h", false, ExcludedRequester},
		{"erin", "h", true, NotExcluded},
		{"bob", "h", true, ExcludedPusher}, // pushing is never waived
		{"carol", "h", false, NotExcluded},
		{"carol", "old", false, ExcludedPusher},
		{"alice", "h", false, NotExcluded},
	}
	for _, tc := range cases {
		if got := Excluded(tc.login, tc.sha, c, st, Rules{AllowAuthor: tc.allowAuthor}, "kptbot[bot]"); got != tc.want {
			t.Errorf("Excluded(%s, %s, allowAuthor=%v) = %d, want %d", tc.login, tc.sha, tc.allowAuthor, got, tc.want)
		}
	}
}

// FuzzDecide: whatever the reviews and record say, a verdict never counts
// the author, a requester, the head's pusher, the bot or a non-approver,
// never counts anyone twice, publishes only when approved, rendered,
// proposed and not paused, and is the same when decided again.
func FuzzDecide(f *testing.F) {
	f.Add("alice", "h", "dana", "bob", "erin", uint8(1), true, false, false, false)
	f.Add("Dana", "h", "dana", "", "", uint8(0), false, true, true, true)
	f.Add("kptbot[bot]", "x", "", "kptbot[bot]", "KPTBOT[bot]", uint8(3), true, true, false, false)
	f.Fuzz(func(t *testing.T, reviewer, sha, author, pusher, requester string, minimum uint8, allowAuthor, draft, paused, failed bool) {
		in := Input{
			Change:  Change{Head: "h", Author: author, Draft: draft},
			Reviews: []forge.Review{approved(reviewer, sha, 1), approved(pusher, "h", 2), approved(requester, "h", 3), approved(author, sha, 4)},
			State: State{Pushers: map[string]string{"h": pusher}, Requesters: []string{requester}, Paused: paused,
				Approvals: []CommandApproval{{By: reviewer, SHA: "h"}}, Digests: map[string]string{sha: "d", "h": "d"}},
			Rules:    Rules{Minimum: int(minimum % 4), AllowAuthor: allowAuthor},
			Bot:      "kptbot[bot]",
			Rendered: !failed,
		}
		in.Approvers = map[string]bool{}
		for _, l := range Candidates(in) {
			in.Approvers[strings.ToLower(l)] = len(l)%2 == 0 // some are approvers, some not
		}
		v := Decide(in)
		seen := map[string]bool{}
		for _, l := range v.Valid {
			k := strings.ToLower(l)
			if seen[k] {
				t.Fatalf("%q counted twice: %+v", l, v)
			}
			seen[k] = true
			if Excluded(l, "h", in.Change, in.State, in.Rules, in.Bot) != NotExcluded || !in.Approvers[k] {
				t.Fatalf("%q counts though excluded or not an approver: %+v", l, v)
			}
		}
		if v.Publish && (!v.Approved || draft || paused || failed) {
			t.Fatalf("publish without approval, or of a draft, paused or failed change: %+v", v)
		}
		if v.Approved != (len(v.Valid) >= max(int(minimum%4), 1)) {
			t.Fatalf("approved=%v with %d valid of minimum %d", v.Approved, len(v.Valid), minimum%4)
		}
		again := Decide(in)
		if strings.Join(again.Valid, ",") != strings.Join(v.Valid, ",") || again.Publish != v.Publish {
			t.Fatalf("not deterministic: %+v then %+v", v, again)
		}
	})
}
