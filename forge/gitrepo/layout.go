// Package gitrepo is kptbot's forge for plain git remotes: no pull
// requests, only branches and tags, in exactly Porch's layout (Porch's
// pkg/externalrepo/git), so a repository can move between Porch and
// kptbot or be served by both:
//
//	refs/heads/drafts/<package>/<workspace>           Draft
//	refs/heads/proposed/<package>/<workspace>         Proposed
//	refs/heads/deletionProposed/<package>/v<N>        DeletionProposed
//	refs/tags/<package>/v<N>                          Published revision N
//
// and commit messages ending with a trailer line
// kpt:{"package":...,"workspaceName":...,"revision":...,"task":{...}}.
package gitrepo

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Lifecycle is a package revision's stage, with Porch's names.
type Lifecycle string

// Porch's lifecycles.
const (
	Draft            Lifecycle = "Draft"
	Proposed         Lifecycle = "Proposed"
	Published        Lifecycle = "Published"
	DeletionProposed Lifecycle = "DeletionProposed"
)

// Ref prefixes of Porch's layout.
const (
	DraftsPrefix           = "refs/heads/drafts/"
	ProposedPrefix         = "refs/heads/proposed/"
	DeletionProposedPrefix = "refs/heads/deletionProposed/"
	TagsPrefix             = "refs/tags/"
)

// RefInfo is what a ref name says about a package revision.
type RefInfo struct {
	Package   string
	Workspace string // drafts and proposals
	Revision  int    // published and deletion-proposed (0 otherwise)
	Lifecycle Lifecycle
}

// ParseRefName classifies a ref of Porch's layout; ok is false for refs
// that are not package revisions (other branches, tags not <pkg>/v<N>).
func ParseRefName(ref string) (RefInfo, bool) {
	split := func(rest string) (string, string, bool) {
		i := strings.LastIndex(rest, "/")
		if i <= 0 || i == len(rest)-1 {
			return "", "", false
		}
		return rest[:i], rest[i+1:], true
	}
	switch {
	case strings.HasPrefix(ref, DraftsPrefix):
		pkg, ws, ok := split(strings.TrimPrefix(ref, DraftsPrefix))
		return RefInfo{Package: pkg, Workspace: ws, Lifecycle: Draft}, ok
	case strings.HasPrefix(ref, ProposedPrefix):
		pkg, ws, ok := split(strings.TrimPrefix(ref, ProposedPrefix))
		return RefInfo{Package: pkg, Workspace: ws, Lifecycle: Proposed}, ok
	case strings.HasPrefix(ref, DeletionProposedPrefix):
		pkg, v, ok := split(strings.TrimPrefix(ref, DeletionProposedPrefix))
		n, vok := ParseRevision(v)
		return RefInfo{Package: pkg, Revision: n, Lifecycle: DeletionProposed}, ok && vok
	case strings.HasPrefix(ref, TagsPrefix):
		pkg, v, ok := split(strings.TrimPrefix(ref, TagsPrefix))
		n, vok := ParseRevision(v)
		return RefInfo{Package: pkg, Revision: n, Lifecycle: Published}, ok && vok
	}
	return RefInfo{}, false
}

// ParseRevision parses Porch's revision names v1, v2, ...
func ParseRevision(v string) (int, bool) {
	if !strings.HasPrefix(v, "v") {
		return 0, false
	}
	n, err := strconv.Atoi(v[1:])
	if err != nil || n <= 0 || strconv.Itoa(n) != v[1:] {
		return 0, false
	}
	return n, true
}

// TagName is the tag of a published revision.
func TagName(pkg string, revision int) string {
	return fmt.Sprintf("%s%s/v%d", TagsPrefix, pkg, revision)
}

// DraftBranch, ProposedBranch and DeletionProposedBranch name Porch's
// branches.
func DraftBranch(pkg, ws string) string    { return DraftsPrefix + pkg + "/" + ws }
func ProposedBranch(pkg, ws string) string { return ProposedPrefix + pkg + "/" + ws }
func DeletionProposedBranch(pkg string, revision int) string {
	return fmt.Sprintf("%s%s/v%d", DeletionProposedPrefix, pkg, revision)
}

// Trailer is the kpt:{...} line Porch ends commit messages with.
type Trailer struct {
	Package       string          `json:"package"`
	WorkspaceName string          `json:"workspaceName,omitempty"`
	Revision      string          `json:"revision,omitempty"`
	Task          json.RawMessage `json:"task,omitempty"`
}

// trailerPrefix starts the trailer; Porch writes it on its own line, older
// Porch versions at the end of the subject.
const trailerPrefix = "kpt:"

// ParseTrailer finds the last kpt:{...} trailer in a commit message. found
// is false when there is none; err reports one that is not valid JSON (Porch
// repositories in the wild have such commits; readers warn and go on).
func ParseTrailer(message string) (t Trailer, found bool, err error) {
	lines := strings.Split(strings.TrimRight(message, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		idx := strings.Index(line, trailerPrefix+"{")
		if idx < 0 {
			continue
		}
		raw := line[idx+len(trailerPrefix):]
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
		return "", err
	}
	return trailerPrefix + string(b), nil
}
