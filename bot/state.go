package bot

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/forge"
)

// The bot keeps what it must remember about a change in one comment it
// authored on that change (the status comment), as a hidden JSON marker.
// Only comments whose author is the bot's own login are read, so a human
// cannot forge the record that decides whether an approval still counts;
// the PR body (which the author can edit) carries only descriptive data.

const (
	stateMarker = "kptbot-state"
	bodyMarker  = "kptbot"
	// keepDigests bounds the heads remembered per change.
	keepDigests = 30
)

var markerRE = regexp.MustCompile(`<!-- (kptbot(?:-state)?): (\{.*?\}) -->`)

// changeState is what the status comment remembers.
type changeState struct {
	// Digests maps head SHAs the bot rendered to the rendered output's
	// digest: an approval of an older head still counts when its digest
	// equals the current head's (a rebase).
	Digests map[string]string `json:"digests,omitempty"`
	// Order lists Digests' keys oldest first, for trimming.
	Order []string `json:"order,omitempty"`
	// Pushers maps a head SHA to who pushed it: that user's approval
	// never counts for it.
	Pushers map[string]string `json:"pushers,omitempty"`
	// Approvals are /kptbot approve commands the bot accepted.
	Approvals []stateApproval `json:"approvals,omitempty"`
	// Noticed are notices already posted (stale approvals, refused
	// merges), so each is said once.
	Noticed []string `json:"noticed,omitempty"`
	// Paused stops the bot from changing the branch.
	Paused bool `json:"paused,omitempty"`
	// Packages are the packages the change touches, as last rendered.
	Packages []string `json:"packages,omitempty"`
}

type stateApproval struct {
	By  string `json:"by"`
	SHA string `json:"sha"`
}

// BodyMarker is the descriptive marker in the body of a change the bot
// opened.
type BodyMarker struct {
	Package      string `json:"package,omitempty"`
	Variant      string `json:"variant,omitempty"`
	UpstreamLock string `json:"upstreamLock,omitempty"`
	Digest       string `json:"digest,omitempty"`
	Deletion     bool   `json:"deletion,omitempty"`
	// Head is the commit the bot last pushed to an update branch: a
	// different head means someone else pushed, and the bot stops.
	Head string `json:"head,omitempty"`
	// Held is the head the bot already said it will not overwrite.
	Held string `json:"held,omitempty"`
	// Paused stops the bot updating this change.
	Paused bool `json:"paused,omitempty"`
}

// FormatMarker renders the hidden marker for a change body.
func FormatMarker(m BodyMarker) string {
	b, _ := json.Marshal(m)
	return "<!-- " + bodyMarker + ": " + string(b) + " -->"
}

// ParseMarker finds the body marker; ok is false when there is none.
func ParseMarker(body string) (m BodyMarker, ok bool) {
	for _, g := range markerRE.FindAllStringSubmatch(body, -1) {
		if g[1] == bodyMarker && json.Unmarshal([]byte(g[2]), &m) == nil {
			return m, true
		}
	}
	return BodyMarker{}, false
}

func parseState(body string) (changeState, bool) {
	for _, g := range markerRE.FindAllStringSubmatch(body, -1) {
		var st changeState
		if g[1] == stateMarker && json.Unmarshal([]byte(g[2]), &st) == nil {
			return st, true
		}
	}
	return changeState{}, false
}

// statusComment is the bot's status comment on a change and its state.
type statusComment struct {
	id    int64
	body  string
	state changeState
}

// findStatus returns the bot's status comment among comments, trusting
// only those the bot itself wrote.
func findStatus(comments []forge.Comment, botLogin string) statusComment {
	for _, c := range comments {
		if !sameLogin(c.Author.Login, botLogin) {
			continue
		}
		if st, ok := parseState(c.Body); ok {
			return statusComment{id: c.ID, body: c.Body, state: st}
		}
	}
	return statusComment{}
}

// sameLogin compares logins as forges do: case-insensitively, with an
// App's "[bot]" suffix optional.
func sameLogin(a, b string) bool {
	norm := func(s string) string { return strings.TrimSuffix(strings.ToLower(s), "[bot]") }
	return a != "" && b != "" && norm(a) == norm(b)
}

func (st *changeState) recordDigest(sha, digest string) {
	if st.Digests == nil {
		st.Digests = map[string]string{}
	}
	if _, ok := st.Digests[sha]; !ok {
		st.Order = append(st.Order, sha)
	}
	st.Digests[sha] = digest
	for len(st.Order) > keepDigests {
		old := st.Order[0]
		st.Order = st.Order[1:]
		delete(st.Digests, old)
		delete(st.Pushers, old)
	}
}

func (st *changeState) recordPusher(sha, login string) {
	if login == "" {
		return
	}
	if st.Pushers == nil {
		st.Pushers = map[string]string{}
	}
	st.Pushers[sha] = login
}

// notice reports whether key is new, and remembers it.
func (st *changeState) notice(key string) bool {
	for _, k := range st.Noticed {
		if k == key {
			return false
		}
	}
	st.Noticed = append(st.Noticed, key)
	if len(st.Noticed) > 100 {
		st.Noticed = st.Noticed[len(st.Noticed)-100:]
	}
	return true
}

// render formats the status comment: a human summary, then the marker.
func (st changeState) render(summary string) string {
	sort.Strings(st.Packages)
	b, _ := json.Marshal(st)
	return fmt.Sprintf("%s\n\n<!-- %s: %s -->", strings.TrimSpace(summary), stateMarker, b)
}
