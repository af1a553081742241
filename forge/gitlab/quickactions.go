package gitlab

import (
	"strings"
	"unicode"
)

// GitLab runs quick actions (/merge, /approve, /close, /label, ...) found
// in a note, a merge request description or an issue description as the
// user who wrote it: for text kptbot posts, as the bot, with its
// permissions. Its extractor (Gitlab::QuickActions::Extractor) deletes
// every "\r", then takes a line as a command when it starts with "/" in
// its first column and a command name follows, then a space or the end of
// the line. Which lines it skips as code or quotes has changed between
// versions (older ones skip only ``` fences at the start of a line and
// >>> quotes; newer ones ask the Markdown renderer for top-level
// paragraphs), so the escaper below follows no fence, indentation or quote
// at all: every line whose first non-space character is "/" is escaped.

// inertText returns text with no line GitLab could read as a quick action,
// for every body the adapter writes (notes, merge request and issue
// descriptions). Carriage returns are dropped, as GitLab drops them before
// looking (so "\n\r/merge" is a command line to GitLab), and a line whose first non-space character is "/" gets a
// backslash before the slash: Markdown's escape, so prose renders exactly
// as before; inside a code block the backslash shows, which is the price
// of not trusting any fence. Applying it twice changes nothing more.
func inertText(text string) string {
	text = strings.ReplaceAll(text, "\r", "")
	if !strings.Contains(text, "/") {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		rest := strings.TrimLeftFunc(l, unicode.IsSpace)
		if strings.HasPrefix(rest, "/") {
			lines[i] = l[:len(l)-len(rest)] + `\` + rest
		}
	}
	return strings.Join(lines, "")
}

// oneLine is a title or other single-line field as GitLab should store it:
// line breaks (which a title cannot show, and which would let a package
// or branch name start a line of its own) become spaces.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
}
