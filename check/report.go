package check

import (
	"fmt"

	"github.com/kptbot/kptbot/forge"
)

// Report is the check run that reports r on commit head under name: the
// resource diff when it rendered, the error otherwise, and each finding
// as an annotation at its file and line.
func (r Result) Report(name, head string) forge.CheckReport {
	rep := forge.CheckReport{Name: name, HeadSHA: head, Status: forge.CheckCompleted}
	switch {
	case r.Deleted:
		rep.Conclusion, rep.Title = forge.CheckSuccess, "package deleted"
		rep.Summary = r.Diff.Summary()
	case r.OK:
		rep.Conclusion, rep.Title = forge.CheckSuccess, "rendered"
		rep.Summary = r.Diff.Summary()
	default:
		rep.Conclusion, rep.Title = forge.CheckFailure, "render or validation failed"
		rep.Summary = "```\n" + Truncate(r.Message, 60000) + "\n```"
	}
	for _, p := range r.Findings {
		if p.File != "" {
			level := "failure"
			if p.Severity == SeverityWarning {
				level = "warning"
			}
			rep.Annotations = append(rep.Annotations, forge.Annotation{Path: p.File, Line: p.Line, Level: level, Message: Truncate(p.Message, 1000)})
		}
		loc := p.File
		if p.Line > 0 {
			loc = fmt.Sprintf("%s:%d", p.File, p.Line)
		}
		rep.Summary += fmt.Sprintf("\n- %s `%s`: %s", p.Severity, loc, Truncate(p.Message, 500))
	}
	return rep
}

// Truncate cuts s to n bytes, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
