package review

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kptbot/kptbot/forge"
)

// Approval is one approver's latest word on a change: who approved
// which commit.
type Approval struct {
	Login string
	SHA   string
}

// word is one person's say on a change, from a review or a command.
type word struct {
	login  string
	sha    string
	at     time.Time
	revoke bool
}

// Latest orders reviews and /kptbot approve commands by the
// forge's time and keeps each person's latest word: an approval counts
// until the same person's later changes-requested or dismissed review.
// A review without a time is taken as the newest word and a command
// approval without one as the oldest, so a missing time never revives an
// approval. The result is in first-approval order.
func Latest(reviews []forge.Review, cmds []CommandApproval) []Approval {
	var words []word
	for _, a := range cmds {
		words = append(words, word{login: a.By, sha: a.SHA, at: a.At})
	}
	nCmds := len(words)
	for _, rv := range reviews {
		switch rv.State {
		case forge.ReviewApproved:
			words = append(words, word{login: rv.Reviewer.Login, sha: rv.CommitSHA, at: rv.SubmittedAt})
		case forge.ReviewChangesRequested, forge.ReviewDismissed:
			words = append(words, word{login: rv.Reviewer.Login, at: rv.SubmittedAt, revoke: true})
		}
	}
	rank := func(i int) (int, time.Time) {
		switch {
		case words[i].at.IsZero() && i < nCmds:
			return 0, time.Time{}
		case words[i].at.IsZero():
			return 2, time.Time{}
		}
		return 1, words[i].at
	}
	idx := make([]int, len(words))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ra, ta := rank(idx[a])
		rb, tb := rank(idx[b])
		if ra != rb {
			return ra < rb
		}
		return ta.Before(tb)
	})
	latest := map[string]*Approval{}
	var order []string
	for _, i := range idx {
		wd := words[i]
		key := strings.ToLower(wd.login)
		if wd.revoke {
			delete(latest, key)
			continue
		}
		if _, ok := latest[key]; !ok {
			order = append(order, key)
		}
		latest[key] = &Approval{Login: wd.login, SHA: wd.sha}
	}
	var out []Approval
	seen := map[string]bool{}
	for _, k := range order {
		if a := latest[k]; a != nil && !seen[k] {
			seen[k] = true
			out = append(out, *a)
		}
	}
	return out
}

// ApprovedHead decides which commit an approve command approves: the one
// it names (a full SHA or a prefix of at least 7 hex digits of a head the
// bot has seen on this change), or else the current head when the comment
// (ID id) is newer than the bot's first sight of it. refusal is the reply
// when neither holds.
func ApprovedHead(st State, current string, id int64, args []string, name string) (sha, refusal string) {
	if len(args) > 0 {
		want := strings.ToLower(args[0])
		if len(want) < 7 || len(want) > 40 || strings.Trim(want, "0123456789abcdef") != "" {
			return "", fmt.Sprintf("%s is not a commit SHA: use `/%s approve SHA` with at least 7 hex digits.", Code(args[0]), name)
		}
		var found []string
		for _, h := range append([]HeadSeen{{SHA: current}}, st.Heads...) {
			if strings.HasPrefix(h.SHA, want) && !contains(found, h.SHA) {
				found = append(found, h.SHA)
			}
		}
		switch len(found) {
		case 1:
			return found[0], ""
		case 0:
			return "", fmt.Sprintf("%s is not a head of this change; the head is `%s`.", Code(args[0]), Short(current))
		default:
			return "", fmt.Sprintf("%s names more than one head of this change; give more digits.", Code(args[0]))
		}
	}
	if head, ok := HeadForComment(st.Heads, current, id); ok {
		return head, ""
	}
	return "", fmt.Sprintf("The head is `%s`, and it may have moved after your comment was written, so kptbot cannot tell which commit you reviewed. Approve it explicitly with `/%s approve %s`.", Short(current), name, current)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Short is a commit SHA as people read it.
func Short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
