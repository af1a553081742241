package gitlab

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// gitlabCommandNames are GitLab's quick action names (and aliases) that
// matter most when run as the bot; the extractor model below takes any
// word anyway, so the list only documents what is at stake.
var gitlabCommandNames = []string{"merge", "approve", "unapprove", "close", "reopen", "label", "unlabel",
	"relabel", "assign", "unassign", "reviewer", "assign_reviewer", "request_review", "draft", "ready", "rebase",
	"submit_review", "target_branch", "title", "lock", "unlock", "award", "copy_metadata", "shrug", "tableflip"}

// extractorLine is Gitlab::QuickActions::Extractor's command pattern with
// any word as the command name: "/" in the first column, a name, then a
// space and arguments, or the end of the line. GitLab also skips code,
// HTML and quote blocks, which only ever removes matches, so this model
// finds every command GitLab could (and more).
var extractorLine = regexp.MustCompile(`(?m)^/([A-Za-z0-9_]+)(?: [^\n]*)?[ \t\f\v]*$`)

// gitlabCommands returns the quick actions GitLab's extractor could find
// in text, after deleting "\r" as it does.
func gitlabCommands(text string) []string {
	var out []string
	for _, m := range extractorLine.FindAllStringSubmatch(strings.ReplaceAll(text, "\r", ""), -1) {
		out = append(out, strings.ToLower(m[1]))
	}
	return out
}

// slashLines is the stricter rule inertText keeps: no line whose first
// non-space character is "/", whatever surrounds it.
func slashLines(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		if strings.HasPrefix(strings.TrimLeftFunc(l, unicode.IsSpace), "/") {
			out = append(out, l)
		}
	}
	return out
}

// attackBodies are texts that reach the bot's notes and descriptions from
// people (package, resource and branch names, commit messages, upstream
// content) shaped to get a quick action past a fence-aware escaper.
var attackBodies = map[string]string{
	"plain":                 "Rendered.\n/merge",
	"tilde fence":           "~~~\n/merge\n~~~",
	"backtick fence":        "```\n/approve\n```",
	"indented fence":        "text\n    ```\n/merge\n    ```",
	"fence with backtick":   "```a`b\n/merge\n```",
	"unclosed fence":        "```yaml\nname: x\n/merge",
	"fence closed by tilde": "```\nx\n~~~\n/approve",
	"carriage return":       "name: a\n\r/merge\r\nmore",
	"crlf":                  "a\r\n/approve\r\n",
	"resource name":         "- `ConfigMap x\n/merge\n`",
	"table cell":            "| `p\n/approve\n` | ✅ |",
	"html block":            "<details>\n/merge\n</details>",
	"quote block":           ">>>\n/merge\n>>>",
	"indented":              "   /merge",
	"tab":                   "\t/approve",
	"nbsp":                  "\u00a0/merge",
	"uppercase":             "/MERGE",
	"with argument":         "/label ~approved\n/assign_reviewer @mallory",
	"shrug substitution":    "/shrug",
}

func TestInertTextLeavesNoQuickAction(t *testing.T) {
	t.Parallel()
	for name, body := range attackBodies {
		if len(gitlabCommands(body))+len(slashLines(body)) == 0 {
			t.Errorf("%s: %q holds no command before escaping: the case proves nothing", name, body)
		}
		got := inertText(body)
		if cmds := gitlabCommands(got); len(cmds) > 0 {
			t.Errorf("%s: inertText(%q) = %q: GitLab would run %v", name, body, got, cmds)
		}
		if ls := slashLines(got); len(ls) > 0 {
			t.Errorf("%s: inertText(%q) = %q still has lines starting with /: %q", name, body, got, ls)
		}
	}
}

func TestInertText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":            "plain",
		"see a/b":          "see a/b",
		"/approve":         `\/approve`,
		"a\n  /close\nb":   "a\n  \\/close\nb",
		"~~~\n/x\n~~~\n/y": "~~~\n\\/x\n~~~\n\\/y",
		"a\r/merge":        "a/merge",
		"a\n\r/merge":      "a\n\\/merge",
		"a\r\n/merge\r\n":  "a\n\\/merge\n",
		`\/merge`:          `\/merge`,
		"/kptbot help":     `\/kptbot help`,
	} {
		if got := inertText(in); got != want {
			t.Errorf("inertText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGitLabCommandsModel(t *testing.T) {
	t.Parallel()
	// The model must find what GitLab finds, or the property proves nothing.
	for in, want := range map[string]string{
		"/merge":             "merge",
		"hi\n/approve\n":     "approve",
		"/label ~x":          "label",
		"/merge  \nx":        "merge",
		"a\r/close":          "",
		"a\n\r/close":        "close",
		"/merge`":            "",
		" /merge":            "",
		"text /merge":        "",
		"/merge/approve":     "",
		"x\n/shrug whatever": "shrug",
	} {
		got := strings.Join(gitlabCommands(in), ",")
		if got != want {
			t.Errorf("gitlabCommands(%q) = %q, want %q", in, got, want)
		}
	}
	for _, n := range gitlabCommandNames {
		if got := gitlabCommands("x\n/" + n + "\n"); len(got) != 1 || got[0] != n {
			t.Errorf("the model misses /%s: %v", n, got)
		}
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Update basens":          "Update basens",
		"a\n/merge":              "a /merge",
		"x\r\n\r\ny\r":           "x y",
		"Delete package p\n\n\n": "Delete package p",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzInertText: whatever text the bot is handed, what it posts holds no
// quick action for GitLab's extractor, no line starting with "/", is a
// fixed point, and differs from the input (less its "\r") only by the
// backslashes inserted before slashes, so it renders the same.
func FuzzInertText(f *testing.F) {
	for _, b := range attackBodies {
		f.Add(b)
	}
	f.Add("")
	f.Add("\n\n/\n")
	f.Fuzz(func(t *testing.T, in string) {
		out := inertText(in)
		if cmds := gitlabCommands(out); len(cmds) > 0 {
			t.Fatalf("inertText(%q) = %q: GitLab would run %v", in, out, cmds)
		}
		if ls := slashLines(out); len(ls) > 0 {
			t.Fatalf("inertText(%q) = %q: lines starting with /: %q", in, out, ls)
		}
		if again := inertText(out); again != out {
			t.Fatalf("inertText is not idempotent: %q -> %q -> %q", in, out, again)
		}
		if strings.ReplaceAll(out, `\/`, "/") != strings.ReplaceAll(strings.ReplaceAll(in, "\r", ""), `\/`, "/") {
			t.Fatalf("inertText(%q) = %q changed more than slashes", in, out)
		}
	})
}
