package porch

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Trailer is the kpt:{...} line Porch ends commit messages with (Porch's
// gitAnnotation). Task is kept as written, so a task kptbot does not model
// (an old Porch's eval or patch) survives a read and a rewrite; ParsedTask
// reads it.
type Trailer struct {
	Package       string          `json:"package,omitempty"`
	WorkspaceName string          `json:"workspaceName,omitempty"`
	Revision      string          `json:"revision,omitempty"`
	Task          json.RawMessage `json:"task,omitempty"`
}

// TrailerPrefix starts the trailer. Porch writes it on its own line, older
// Porch versions at the end of the subject.
const TrailerPrefix = "kpt:"

// ParseTrailer finds the last kpt:{...} trailer in a commit message. found
// is false when there is none; err reports one that is not valid JSON
// (Porch repositories in the wild have such commits; readers warn and go
// on).
func ParseTrailer(message string) (t Trailer, found bool, err error) {
	lines := strings.Split(strings.TrimRight(message, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		idx := strings.Index(line, TrailerPrefix+"{")
		if idx < 0 {
			continue
		}
		raw := line[idx+len(TrailerPrefix):]
		if err := json.Unmarshal([]byte(raw), &t); err != nil {
			return Trailer{}, true, fmt.Errorf("malformed kpt trailer %q: %w", raw, err)
		}
		return t, true, nil
	}
	return Trailer{}, false, nil
}

// FormatTrailer renders the trailer line Porch writes.
func FormatTrailer(t Trailer) (string, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("encoding the kpt trailer of %s: %w", t.Package, err)
	}
	return TrailerPrefix + string(b), nil
}

// TaskTrailer is the trailer line of a commit task made to pkg's
// revision in workspace ws (revision "" before publishing). A typed task
// always encodes, so there is no error to handle.
func TaskTrailer(pkg, ws, revision string, task Task) string {
	line, err := FormatTrailer(Trailer{Package: pkg, WorkspaceName: ws, Revision: revision, Task: task.JSON()})
	if err != nil {
		panic(err) // unreachable: Task.JSON is valid JSON
	}
	return line
}

// ParsedTask reads the trailer's task; ok is false when it has none.
func (t Trailer) ParsedTask() (task Task, ok bool, err error) {
	if len(t.Task) == 0 || string(t.Task) == "null" {
		return Task{}, false, nil
	}
	task, err = ParseTask(t.Task)
	return task, err == nil, err
}
