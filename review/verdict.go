package review

import (
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/forge"
)

// Rules are a repository's approval rules (kptbot.yaml spec.approvals)
// as the verdict needs them; who may approve is resolved by the caller
// (it takes the forge: permissions, team membership) into
// Input.Approvers.
type Rules struct {
	// Minimum is how many approvals must count (zero: one).
	Minimum int
	// AllowAuthor lets the author, and whoever requested the change by
	// command, approve it.
	AllowAuthor bool
}

// Change is what the verdict needs of the change itself.
type Change struct {
	// Head is the change's current head commit.
	Head string
	// Author is the login that opened the change.
	Author string
	Draft  bool
}

// Input is everything an approval verdict is decided from.
type Input struct {
	Change Change
	// Reviews are the change's reviews as the forge lists them.
	Reviews []forge.Review
	// State is the bot's record on the change (command approvals,
	// pushers, requesters, digests, pause).
	State State
	Rules Rules
	// Bot is the bot's own login: its word never counts.
	Bot string
	// Approvers maps each login Candidates returned (lower-cased) to
	// whether the rules let them approve; a login missing is not an
	// approver.
	Approvers map[string]bool
	// Rendered is true when every package the change touches rendered
	// and passed its guardrails at Head.
	Rendered bool
}

// Verdict is what the approvals of a change's head amount to.
type Verdict struct {
	// Valid are the approvers whose approval counts for the head, in
	// first-approval order.
	Valid []string
	// Stale are approvals of an earlier head whose change differs.
	Stale []Approval
	// Refused say, one per person, why an approval does not count
	// (author, requester, pusher, not an approver).
	Refused []string
	// Approved is true when enough approvals count: a merged change with
	// an approved head is published.
	Approved bool
	// Publish is true when an open change may be merged now: approved,
	// proposed (not a draft), rendered green, not paused.
	Publish bool
}

// Exclusion is why someone's approval can never count for a commit,
// whoever the approvers are.
type Exclusion int

// The exclusions, in the order they are checked.
const (
	NotExcluded Exclusion = iota
	// ExcludedBot: the bot's own account.
	ExcludedBot
	// ExcludedAuthor: the change's author.
	ExcludedAuthor
	// ExcludedRequester: asked for the change by command, which makes
	// them an author.
	ExcludedRequester
	// ExcludedPusher: pushed the commit being approved.
	ExcludedPusher
)

// Excluded says whether login's approval of commit sha is excluded on
// this change: the one rule both reviews and /kptbot approve follow.
func Excluded(login, sha string, c Change, st State, r Rules, bot string) Exclusion {
	switch {
	case SameLogin(login, bot):
		return ExcludedBot
	case SameLogin(login, c.Author) && !r.AllowAuthor:
		return ExcludedAuthor
	case st.Requested(login) && !r.AllowAuthor:
		return ExcludedRequester
	case SameLogin(login, st.Pushers[sha]):
		return ExcludedPusher
	}
	return NotExcluded
}

// Candidates are the logins whose right to approve Decide needs: the
// latest approval of each person no exclusion removes. The caller
// resolves each (the only I/O of a verdict) into Input.Approvers.
func Candidates(in Input) []string {
	var out []string
	for _, a := range Latest(in.Reviews, in.State.Approvals) {
		if Excluded(a.Login, in.Change.Head, in.Change, in.State, in.Rules, in.Bot) == NotExcluded {
			out = append(out, a.Login)
		}
	}
	return out
}

// Decide counts the approvals that hold for the change's head. Each
// person's latest word counts (Latest); an approval counts for the head
// it names, or for another head whose whole change (every path from the
// fork point, and the rendered output) has the same recorded digest.
func Decide(in Input) Verdict {
	var v Verdict
	st, head := in.State, in.Change.Head
	for _, a := range Latest(in.Reviews, st.Approvals) {
		switch Excluded(a.Login, head, in.Change, st, in.Rules, in.Bot) {
		case ExcludedBot:
			continue
		case ExcludedAuthor:
			v.Refused = append(v.Refused, fmt.Sprintf("@%s authored the change", a.Login))
			continue
		case ExcludedRequester:
			v.Refused = append(v.Refused, fmt.Sprintf("@%s requested the change by command, which makes them its author", a.Login))
			continue
		case ExcludedPusher:
			v.Refused = append(v.Refused, fmt.Sprintf("@%s pushed the head commit", a.Login))
			continue
		}
		if !in.Approvers[strings.ToLower(a.Login)] {
			v.Refused = append(v.Refused, fmt.Sprintf("@%s is not an approver", a.Login))
			continue
		}
		if a.SHA != "" && (a.SHA == head || (st.Digests[a.SHA] != "" && st.Digests[a.SHA] == st.Digests[head])) {
			v.Valid = append(v.Valid, a.Login)
			continue
		}
		v.Stale = append(v.Stale, a)
	}
	v.Approved = len(v.Valid) >= max(in.Rules.Minimum, 1)
	v.Publish = v.Approved && in.Rendered && !in.Change.Draft && !st.Paused
	return v
}
