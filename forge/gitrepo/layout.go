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
// The naming rules are package porch's; this package holds the git
// plumbing that applies them.
package gitrepo

import "github.com/kptbot/kptbot/porch"

// The full refs of a package revision's branches, for ref updates.
func draftRef(pkg, ws string) string    { return porch.BranchRef(porch.DraftBranch(pkg, ws)) }
func proposedRef(pkg, ws string) string { return porch.BranchRef(porch.ProposedBranch(pkg, ws)) }
func deletionProposedRef(pkg string, n int) string {
	return porch.BranchRef(porch.DeletionProposedBranch(pkg, n))
}

// Lifecycle, RefInfo and the functions below are porch's, kept under
// their old names until every caller names porch.
type (
	// Lifecycle is porch.Lifecycle.
	Lifecycle = porch.Lifecycle
	// RefInfo is porch.RefInfo.
	RefInfo = porch.RefInfo
	// Trailer is porch.Trailer.
	Trailer = porch.Trailer
)

// Porch's lifecycles (porch's).
const (
	Draft            = porch.Draft
	Proposed         = porch.Proposed
	Published        = porch.Published
	DeletionProposed = porch.DeletionProposed
)

// TagsPrefix is porch.TagRefPrefix.
const TagsPrefix = porch.TagRefPrefix

// ParseRefName is porch.ParseRef.
func ParseRefName(ref string) (RefInfo, bool) { return porch.ParseRef(ref) }

// ParseRevision is porch.ParseRevision.
func ParseRevision(v string) (int, bool) { return porch.ParseRevision(v) }

// TagName is porch.TagRef.
func TagName(pkg string, revision int) string { return porch.TagRef(pkg, revision) }

// DraftBranch is the full ref of porch.DraftBranch.
func DraftBranch(pkg, ws string) string { return draftRef(pkg, ws) }

// DeletionProposedBranch is the full ref of porch.DeletionProposedBranch.
func DeletionProposedBranch(pkg string, revision int) string {
	return deletionProposedRef(pkg, revision)
}

// ParseTrailer is porch.ParseTrailer.
func ParseTrailer(message string) (Trailer, bool, error) { return porch.ParseTrailer(message) }

// FormatTrailer is porch.FormatTrailer.
func FormatTrailer(t Trailer) (string, error) { return porch.FormatTrailer(t) }
