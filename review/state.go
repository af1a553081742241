package review

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kptbot/kptbot/forge"
)

// The bot keeps what it must remember about a change in one comment it
// authored on that change (the status comment), as a hidden JSON marker.
// Three rules keep users' text from ever being read as that record:
//   - only comments whose author is the bot's own account are read
//     (IsSelf: exact login and the forge's bot flag);
//   - the record is the marker that ends the comment, and the comment
//     must begin with the status header: text the bot echoes sits between
//     the two and cannot move either;
//   - every user-controlled string the bot echoes goes through UserText
//     (no "<", ">", backticks or newlines survive), and the marker's JSON
//     escapes "<" and ">" itself, so no echoed name can open or close an
//     HTML comment.
// The PR body (which the author can edit) carries only descriptive data.

const (
	stateMarker = "kptbot-state"
	bodyMarker  = "kptbot"
	// keepDigests bounds the heads remembered per change.
	keepDigests = 30
	// StatusHeader begins every status comment.
	StatusHeader = "**kptbot** status for this change"
	stateOpen    = "<!-- " + stateMarker + ": "
	markerClose  = " -->"
)

var markerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<!-- (kptbot(?:-state)?): (\{.*?\}) -->`) })

// State is what the status comment remembers.
type State struct {
	// Digests maps head SHAs the bot rendered to the digest of the whole
	// change at that head (every path changed since the fork point, and
	// the rendered output): an approval of an older head still counts
	// when its digest equals the current head's (a rebase).
	Digests map[string]string `json:"digests,omitempty"`
	// Order lists Digests' keys oldest first, for trimming.
	Order []string `json:"order,omitempty"`
	// Pushers maps a head SHA to who pushed it: that user's approval
	// never counts for it.
	Pushers map[string]string `json:"pushers,omitempty"`
	// Heads are the heads the change had, in the order the bot saw them,
	// each with the comment-ID watermark of when it was first seen: a
	// command comment with a larger ID was written while that head (or a
	// later one) was the head.
	Heads []HeadSeen `json:"heads,omitempty"`
	// Requesters asked the bot, by command, to make this change's content
	// (a deletion, an update): each counts as an author.
	Requesters []string `json:"requesters,omitempty"`
	// Approvals are /kptbot approve commands the bot accepted.
	Approvals []CommandApproval `json:"approvals,omitempty"`
	// Noticed are notices already posted (stale approvals, refused
	// merges), so each is said once.
	Noticed []string `json:"noticed,omitempty"`
	// Paused stops the bot from changing the branch.
	Paused bool `json:"paused,omitempty"`
	// Packages are the packages the change touches, as last rendered.
	Packages []string `json:"packages,omitempty"`
}

// CommandApproval is one /kptbot approve the bot accepted: who, for
// which commit, and when.
type CommandApproval struct {
	By  string `json:"by"`
	SHA string `json:"sha"`
	// At is the forge's creation time of the command comment, which
	// orders it against reviews (a later changes-requested review by the
	// same person revokes it).
	At time.Time `json:"at,omitempty"`
}

// HeadSeen is one head of a change and the highest comment ID that
// existed when the bot first saw it.
type HeadSeen struct {
	SHA   string `json:"sha"`
	After int64  `json:"after"`
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

// SetMarker returns body with its markers replaced by m's.
func SetMarker(body string, m BodyMarker) string {
	return strings.TrimSpace(markerRE().ReplaceAllString(body, "")) + "\n\n" + FormatMarker(m)
}

// FormatMarker renders the hidden marker for a change body.
func FormatMarker(m BodyMarker) string {
	b, _ := json.Marshal(m)
	return "<!-- " + bodyMarker + ": " + string(b) + " -->"
}

// ParseMarker finds the body marker; ok is false when there is none. The
// bot appends its marker at the end of a body, so the last one counts: a
// marker earlier in the text is someone's echo, not the bot's record.
func ParseMarker(body string) (m BodyMarker, ok bool) {
	gs := markerRE().FindAllStringSubmatch(body, -1)
	for i := len(gs) - 1; i >= 0; i-- {
		var cand BodyMarker
		if gs[i][1] == bodyMarker && json.Unmarshal([]byte(gs[i][2]), &cand) == nil {
			return cand, true
		}
	}
	return BodyMarker{}, false
}

// ParseState reads the record that ends a status comment: the last
// marker, which must close the body. A marker anywhere else (echoed text,
// a quote) is not the record.
func ParseState(body string) (State, bool) {
	body = strings.TrimRight(body, " \t\r\n")
	if !strings.HasPrefix(body, StatusHeader) || !strings.HasSuffix(body, markerClose) {
		return State{}, false
	}
	i := strings.LastIndex(body, stateOpen)
	if i < 0 {
		return State{}, false
	}
	raw := body[i+len(stateOpen) : len(body)-len(markerClose)]
	var st State
	if !strings.HasPrefix(raw, "{") || json.Unmarshal([]byte(raw), &st) != nil {
		return State{}, false
	}
	return st, true
}

// Status is the bot's status comment on a change and its state.
type Status struct {
	// ID is the comment's id (0 when the bot has not written one yet).
	ID int64
	// Body is the comment as the forge holds it.
	Body string
	// State is the record parsed from its marker.
	State State
}

// FindStatus returns the bot's status comment among comments (the oldest
// one, which the bot keeps editing), trusting only those the bot itself
// wrote.
func FindStatus(comments []forge.Comment, self string) Status {
	for _, c := range comments {
		if !IsSelf(c.Author, self) {
			continue
		}
		if st, ok := ParseState(c.Body); ok {
			return Status{ID: c.ID, Body: c.Body, State: st}
		}
	}
	return Status{}
}

// SameLogin compares two people's logins as forges do: exactly, but
// case-insensitively (GitHub and GitLab logins are unique regardless of
// case). "kptbot" and "kptbot[bot]" are different accounts.
func SameLogin(a, b string) bool {
	return a != "" && b != "" && strings.EqualFold(a, b)
}

// IsSelf reports whether u is the bot's own account: the same login and,
// for an App identity (login ending in "[bot]"), the forge's bot flag, so
// a user account can never pass as the bot.
func IsSelf(u forge.User, self string) bool {
	if !SameLogin(u.Login, self) {
		return false
	}
	return u.Bot || !strings.HasSuffix(strings.ToLower(self), "[bot]")
}

// UserText makes a user-controlled string safe to echo in a comment: HTML
// special characters, backticks and table pipes become entities, line
// breaks become spaces, and mentions are defused. The result is meant for
// plain text or an HTML <code> element, never a Markdown code span
// (entities are shown literally there).
func UserText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&#39;")
		case '`':
			b.WriteString("&#96;")
		case '|':
			b.WriteString("&#124;")
		case '@':
			b.WriteString("&#64;")
		case '\\':
			b.WriteString("&#92;")
		case '\n', '\r', '\t', '\u2028', '\u2029':
			b.WriteByte(' ')
		default:
			if r < 0x20 || r == 0x7f {
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// code shows a user-controlled string as inline code, safely: a plain
// name (letters, digits and . _ / + = : , -) as a Markdown code span,
// anything else escaped inside an HTML code element.
func Code(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/+=:,-", r)) {
			plain = false
			break
		}
	}
	if plain {
		return "`" + s + "`"
	}
	return "<code>" + UserText(s) + "</code>"
}

// RecordDigest remembers the whole change's digest at head sha, keeping
// the newest heads only.
func (st *State) RecordDigest(sha, digest string) {
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

// RecordPusher remembers who pushed head sha.
func (st *State) RecordPusher(sha, login string) {
	if login == "" {
		return
	}
	if st.Pushers == nil {
		st.Pushers = map[string]string{}
	}
	st.Pushers[sha] = login
}

// Notice reports whether key is new, and remembers it.
func (st *State) Notice(key string) bool {
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

// Render formats the status comment: a human summary, then the marker.
// The summary must begin with StatusHeader and echo user text only
// through UserText or code.
func (st State) Render(summary string) string {
	sort.Strings(st.Packages)
	b, _ := json.Marshal(st) // escapes <, > and &: the JSON cannot end the comment
	return fmt.Sprintf("%s\n\n%s%s%s", strings.TrimSpace(summary), stateOpen, b, markerClose)
}

// ObserveHead records the change's current head the first time the bot
// sees it, with the highest comment ID listed after the head was read.
func (st *State) ObserveHead(head string, comments []forge.Comment) {
	if n := len(st.Heads); n > 0 && st.Heads[n-1].SHA == head {
		return
	}
	var maxID int64
	for _, c := range comments {
		maxID = max(maxID, c.ID)
	}
	st.Heads = append(st.Heads, HeadSeen{SHA: head, After: maxID})
	if len(st.Heads) > keepDigests {
		st.Heads = st.Heads[len(st.Heads)-keepDigests:]
	}
}

// HeadForComment is the head a comment with ID id was written against:
// ok only when the change's head has not moved since the comment was
// written, i.e. the comment is newer than when the bot first saw the
// current head. Anything else (the head moved after the comment, or the
// bot cannot tell) is not ok.
func HeadForComment(heads []HeadSeen, current string, id int64) (string, bool) {
	n := len(heads)
	if id <= 0 || n == 0 || heads[n-1].SHA != current || id <= heads[n-1].After {
		return "", false
	}
	return current, true
}

// Requested reports whether login asked for this change by command.
func (st State) Requested(login string) bool {
	for _, r := range st.Requesters {
		if SameLogin(r, login) {
			return true
		}
	}
	return false
}

// AddRequester remembers login as one who asked for the change.
func (st *State) AddRequester(login string) {
	if login != "" && !st.Requested(login) {
		st.Requesters = append(st.Requesters, login)
	}
}
