// Package bot is kptbot's reconciler on a forge: it maps Porch's package
// lifecycle onto branches, changes (PRs/MRs), reviews and tags, answers
// comment commands, and reports checks and the dashboard. Every transport
// (the webhook server, the Action, kptbot replay) goes through Handle.
package bot

// Outcome is what handling one event or reconciling one repository did: the
// Action's outputs and step summary, replay's report, the server's log line.
type Outcome struct {
	Opened   []ChangeRef `json:"opened,omitempty"`
	Updated  []ChangeRef `json:"updated,omitempty"`
	Merged   []ChangeRef `json:"merged,omitempty"`
	Closed   []ChangeRef `json:"closed,omitempty"`
	Tags     []TagRef    `json:"tags,omitempty"`
	Checks   []CheckRef  `json:"checks,omitempty"`
	Comments int         `json:"comments,omitempty"`
	// Problems are per-package errors and warnings (render, validation,
	// refused commands) with a file and line where one is known.
	Problems []Problem `json:"problems,omitempty"`
	// Skipped says why an event needed no work ("" when it did some).
	Skipped string `json:"skipped,omitempty"`
}

// ChangeRef names a change the bot opened, updated, merged or closed.
type ChangeRef struct {
	Repo    string `json:"repo"`
	Number  int    `json:"number"`
	Package string `json:"package,omitempty"`
	Title   string `json:"title,omitempty"`
	URL     string `json:"url,omitempty"`
}

// TagRef is a tag the bot created: a published package revision.
type TagRef struct {
	Repo    string `json:"repo"`
	Name    string `json:"name"`
	SHA     string `json:"sha"`
	Package string `json:"package,omitempty"`
}

// CheckRef is a check the bot reported.
type CheckRef struct {
	Repo       string `json:"repo"`
	Name       string `json:"name"`
	SHA        string `json:"sha"`
	Conclusion string `json:"conclusion"`
	Package    string `json:"package,omitempty"`
	Summary    string `json:"summary,omitempty"`
}

// Severity grades a Problem.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Problem is an error or warning about a package, placed at a file and line
// when known so the Action can annotate the right line.
type Problem struct {
	Severity Severity `json:"severity"`
	Repo     string   `json:"repo,omitempty"`
	Package  string   `json:"package,omitempty"`
	// File is a slash path relative to the repository root.
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// Add appends o's records to the receiver's.
func (out *Outcome) Add(o Outcome) {
	out.Opened = append(out.Opened, o.Opened...)
	out.Updated = append(out.Updated, o.Updated...)
	out.Merged = append(out.Merged, o.Merged...)
	out.Closed = append(out.Closed, o.Closed...)
	out.Tags = append(out.Tags, o.Tags...)
	out.Checks = append(out.Checks, o.Checks...)
	out.Comments += o.Comments
	out.Problems = append(out.Problems, o.Problems...)
	if out.Skipped == "" {
		out.Skipped = o.Skipped
	}
}

// Empty reports whether nothing was done or found.
func (out Outcome) Empty() bool {
	return len(out.Opened)+len(out.Updated)+len(out.Merged)+len(out.Closed)+len(out.Tags)+len(out.Checks)+len(out.Problems) == 0 && out.Comments == 0
}
