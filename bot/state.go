package bot

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/kptbot/kptbot/forge"
)

// The bot keeps what it must remember about a change in one comment it
// authored on that change (the status comment), as a hidden JSON marker.
// Three rules keep users' text from ever being read as that record:
//   - only comments whose author is the bot's own account are read
//     (isSelf: exact login and the forge's bot flag);
//   - the record is the marker that ends the comment, and the comment
//     must begin with the status header: text the bot echoes sits between
//     the two and cannot move either;
//   - every user-controlled string the bot echoes goes through userText
//     (no "<", ">", backticks or newlines survive), and the marker's JSON
//     escapes "<" and ">" itself, so no echoed name can open or close an
//     HTML comment.
// The PR body (which the author can edit) carries only descriptive data.

const (
	stateMarker = "kptbot-state"
	bodyMarker  = "kptbot"
	// keepDigests bounds the heads remembered per change.
	keepDigests = 30
	// statusHeader begins every status comment.
	statusHeader = "**kptbot** status for this change"
	stateOpen    = "<!-- " + stateMarker + ": "
	markerClose  = " -->"
)

var markerRE = regexp.MustCompile(`<!-- (kptbot(?:-state)?): (\{.*?\}) -->`)

// changeState is what the status comment remembers.
type changeState struct {
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
	Heads []headSeen `json:"heads,omitempty"`
	// Requesters asked the bot, by command, to make this change's content
	// (a deletion, an update): each counts as an author.
	Requesters []string `json:"requesters,omitempty"`
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
	// At is the forge's creation time of the command comment, which
	// orders it against reviews (a later changes-requested review by the
	// same person revokes it).
	At time.Time `json:"at,omitempty"`
}

// headSeen is one head of a change and the highest comment ID that
// existed when the bot first saw it.
type headSeen struct {
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

// FormatMarker renders the hidden marker for a change body.
func FormatMarker(m BodyMarker) string {
	b, _ := json.Marshal(m)
	return "<!-- " + bodyMarker + ": " + string(b) + " -->"
}

// ParseMarker finds the body marker; ok is false when there is none. The
// bot appends its marker at the end of a body, so the last one counts: a
// marker earlier in the text is someone's echo, not the bot's record.
func ParseMarker(body string) (m BodyMarker, ok bool) {
	gs := markerRE.FindAllStringSubmatch(body, -1)
	for i := len(gs) - 1; i >= 0; i-- {
		var cand BodyMarker
		if gs[i][1] == bodyMarker && json.Unmarshal([]byte(gs[i][2]), &cand) == nil {
			return cand, true
		}
	}
	return BodyMarker{}, false
}

// parseState reads the record that ends a status comment: the last
// marker, which must close the body. A marker anywhere else (echoed text,
// a quote) is not the record.
func parseState(body string) (changeState, bool) {
	body = strings.TrimRight(body, " \t\r\n")
	if !strings.HasPrefix(body, statusHeader) || !strings.HasSuffix(body, markerClose) {
		return changeState{}, false
	}
	i := strings.LastIndex(body, stateOpen)
	if i < 0 {
		return changeState{}, false
	}
	raw := body[i+len(stateOpen) : len(body)-len(markerClose)]
	var st changeState
	if !strings.HasPrefix(raw, "{") || json.Unmarshal([]byte(raw), &st) != nil {
		return changeState{}, false
	}
	return st, true
}

// statusComment is the bot's status comment on a change and its state.
type statusComment struct {
	id    int64
	body  string
	state changeState
}

// findStatus returns the bot's status comment among comments (the oldest
// one, which the bot keeps editing), trusting only those the bot itself
// wrote.
func findStatus(comments []forge.Comment, self string) statusComment {
	for _, c := range comments {
		if !isSelf(c.Author, self) {
			continue
		}
		if st, ok := parseState(c.Body); ok {
			return statusComment{id: c.ID, body: c.Body, state: st}
		}
	}
	return statusComment{}
}

// sameLogin compares two people's logins as forges do: exactly, but
// case-insensitively (GitHub and GitLab logins are unique regardless of
// case). "kptbot" and "kptbot[bot]" are different accounts.
func sameLogin(a, b string) bool {
	return a != "" && b != "" && strings.EqualFold(a, b)
}

// isSelf reports whether u is the bot's own account: the same login and,
// for an App identity (login ending in "[bot]"), the forge's bot flag, so
// a user account can never pass as the bot.
func isSelf(u forge.User, self string) bool {
	if !sameLogin(u.Login, self) {
		return false
	}
	return u.Bot || !strings.HasSuffix(strings.ToLower(self), "[bot]")
}

// userText makes a user-controlled string safe to echo in a comment: HTML
// special characters, backticks and table pipes become entities, line
// breaks become spaces, and mentions are defused. The result is meant for
// plain text or an HTML <code> element, never a Markdown code span
// (entities are shown literally there).
func userText(s string) string {
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
func code(s string) string {
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
	return "<code>" + userText(s) + "</code>"
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
// The summary must begin with statusHeader and echo user text only
// through userText or code.
func (st changeState) render(summary string) string {
	sort.Strings(st.Packages)
	b, _ := json.Marshal(st) // escapes <, > and &: the JSON cannot end the comment
	return fmt.Sprintf("%s\n\n%s%s%s", strings.TrimSpace(summary), stateOpen, b, markerClose)
}

// observeHead records the change's current head the first time the bot
// sees it, with the highest comment ID listed after the head was read.
func (st *changeState) observeHead(head string, comments []forge.Comment) {
	if n := len(st.Heads); n > 0 && st.Heads[n-1].SHA == head {
		return
	}
	var maxID int64
	for _, c := range comments {
		maxID = max(maxID, c.ID)
	}
	st.Heads = append(st.Heads, headSeen{SHA: head, After: maxID})
	if len(st.Heads) > keepDigests {
		st.Heads = st.Heads[len(st.Heads)-keepDigests:]
	}
}

// headForComment is the head a comment with ID id was written against:
// ok only when the change's head has not moved since the comment was
// written, i.e. the comment is newer than when the bot first saw the
// current head. Anything else (the head moved after the comment, or the
// bot cannot tell) is not ok.
func headForComment(heads []headSeen, current string, id int64) (string, bool) {
	n := len(heads)
	if id <= 0 || n == 0 || heads[n-1].SHA != current || id <= heads[n-1].After {
		return "", false
	}
	return current, true
}

// requested reports whether login asked for this change by command.
func (st changeState) requested(login string) bool {
	for _, r := range st.Requesters {
		if sameLogin(r, login) {
			return true
		}
	}
	return false
}

// addRequester remembers login as one who asked for the change.
func (st *changeState) addRequester(login string) {
	if login != "" && !st.requested(login) {
		st.Requesters = append(st.Requesters, login)
	}
}
