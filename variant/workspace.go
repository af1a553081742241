package variant

import (
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/porch"
)

// Tagged is a published revision's tag (a tag name as forges list it, or
// a full refs/tags/ ref) and the commit it points at.
type Tagged struct {
	Name, Commit string
}

// WorkspaceRevision is Porch's upstream.workspaceName: the published
// revision (v<N>) of pkg whose commit's Porch trailer names workspace ws;
// the highest when several do. message reads a commit's message.
func WorkspaceRevision(pkg, ws string, tags []Tagged, message func(commit string) (string, error)) (string, error) {
	best := -1
	for _, t := range tags {
		p, n, ok := porch.ParseTag(strings.TrimPrefix(t.Name, porch.TagRefPrefix))
		if !ok || p != pkg || n <= best {
			continue
		}
		msg, err := message(t.Commit)
		if err != nil {
			return "", fmt.Errorf("reading the commit of %s: %w", t.Name, err)
		}
		if tr, found, err := porch.ParseTrailer(msg); err == nil && found && tr.WorkspaceName == ws {
			best = n
		}
	}
	if best < 0 {
		return "", fmt.Errorf("upstream.workspaceName %q: no published revision of %s was made in that workspace (no tag %s/v<N> whose commit's kpt trailer names it)", ws, pkg, pkg)
	}
	return porch.RevisionName(best), nil
}
