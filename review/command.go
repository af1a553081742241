package review

import (
	"github.com/kptbot/kptbot/internal/spelling"
	"sort"
	"strings"
	"unicode"
)

// Verb is a comment command's verb.
type Verb string

// The verbs kptbot answers.
const (
	VerbPropose  Verb = "propose"
	VerbApprove  Verb = "approve"
	VerbReject   Verb = "reject"
	VerbRender   Verb = "render"
	VerbPause    Verb = "pause"
	VerbResume   Verb = "resume"
	VerbDelete   Verb = "delete"
	VerbHelp     Verb = "help"
	VerbUpdate   Verb = "update"
	VerbRecreate Verb = "recreate"
)

// Verbs lists every verb with its one-line help, in help order.
var verbHelp = []struct {
	Verb Verb
	Args string
	Help string
}{
	{VerbPropose, "", "mark this draft ready for review (Draft → Proposed)"},
	{VerbApprove, "", "approve the current head (approvers only); publishes when enough approvals count"},
	{VerbReject, "", "send this proposal back to draft"},
	{VerbRender, "", "render the package(s) again and report the check"},
	{VerbPause, "", "stop the bot from updating this change"},
	{VerbResume, "", "let the bot update this change again"},
	{VerbDelete, "PACKAGE", "open a change that deletes PACKAGE (DeletionProposed)"},
	{VerbUpdate, "[REVISION]", "re-merge the newer upstream onto this branch"},
	{VerbRecreate, "", "rebuild this branch from scratch, dropping its commits"},
	{VerbHelp, "", "show this help"},
}

func knownVerb(v string) bool {
	for _, h := range verbHelp {
		if string(h.Verb) == v {
			return true
		}
	}
	return false
}

// Command is one parsed comment command.
type Command struct {
	Verb Verb
	Args []string
	// Unknown is the verb as typed when it is not a kptbot verb; Suggest
	// is the closest verb, for "did you mean".
	Unknown string
	Suggest Verb
	// Line is the 1-based line of the comment the command was on.
	Line int
}

// ParseCommands finds the commands in a comment body: lines starting with
// /botName or @botName (case-insensitive), outside fenced code blocks and
// quotes, as Atlantis does. Anything else in the comment is ignored, so a
// command can sit inside a longer review note.
func ParseCommands(botName, body string) []Command {
	var out []Command
	fenced := false
	for i, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(t, ">") {
			continue
		}
		fields := strings.FieldsFunc(t, unicode.IsSpace)
		if len(fields) == 0 || !addressed(botName, fields[0]) {
			continue
		}
		c := Command{Line: i + 1, Verb: VerbHelp}
		if len(fields) > 1 {
			v := strings.ToLower(fields[1])
			if len(fields) > 2 {
				c.Args = fields[2:]
			}
			if knownVerb(v) {
				c.Verb = Verb(v)
			} else {
				c.Verb, c.Unknown, c.Suggest = "", fields[1], suggest(v)
			}
		}
		out = append(out, c)
	}
	return out
}

func addressed(botName, word string) bool {
	w := strings.ToLower(word)
	name := strings.ToLower(botName)
	return w == "/"+name || w == "@"+name || w == "@"+name+"[bot]"
}

// suggest returns the known verb closest to v by edit distance, or "" when
// none is close enough to be what was meant.
func suggest(v string) Verb {
	type cand struct {
		verb Verb
		d    int
	}
	var cs []cand
	for _, h := range verbHelp {
		cs = append(cs, cand{h.Verb, spelling.Distance(v, string(h.Verb))})
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	if len(cs) == 0 || cs[0].d > 1+len(v)/3 {
		return ""
	}
	return cs[0].verb
}

// HelpText is the reply to /kptbot help and to unknown verbs.
func HelpText(botName string) string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, h := range verbHelp {
		cmd := "/" + botName + " " + string(h.Verb)
		if h.Args != "" {
			cmd += " " + h.Args
		}
		b.WriteString("| `" + cmd + "` | " + h.Help + " |\n")
	}
	b.WriteString("\nCommands need write permission on the repository; `approve` counts only from the approvers in kptbot.yaml. Edited comments are never read as commands.\n")
	return b.String()
}
