// Package gitstore is Porch's package lifecycle on a plain git repository:
// no pull requests, only branches and tags, in exactly Porch's layout
// (Porch's pkg/externalrepo/git), so a repository can move between Porch
// and kptbot or be served by both:
//
//	refs/heads/drafts/<package>/<workspace>           Draft
//	refs/heads/proposed/<package>/<workspace>         Proposed
//	refs/heads/deletionProposed/<package>/v<N>        DeletionProposed
//	refs/tags/<package>/v<N>                          Published revision N
//
// and commit messages ending with a trailer line
// kpt:{"package":...,"workspaceName":...,"revision":...,"task":{...}}.
// The naming rules are package porch's; the git object plumbing is
// package forge/gitrepo's; this package applies them: drafts, proposals,
// approval, deletion and the listing of a repository's revisions.
package gitstore

import "github.com/kptbot/kptbot/porch"

// The full refs of a package revision's branches, for ref updates.
func draftRef(pkg, ws string) string    { return porch.BranchRef(porch.DraftBranch(pkg, ws)) }
func proposedRef(pkg, ws string) string { return porch.BranchRef(porch.ProposedBranch(pkg, ws)) }
func deletionProposedRef(pkg string, n int) string {
	return porch.BranchRef(porch.DeletionProposedBranch(pkg, n))
}
