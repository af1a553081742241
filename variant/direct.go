package variant

import (
	"context"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/fetch/sources"
	"github.com/kptbot/kptbot/porch"
)

// Direct is the planner's upstream Resolver for upstreams reached
// directly (git remotes, OCI registries, HTTP archives): the CLI's for
// every upstream, the bot's for those off its forges.
type Direct struct {
	*sources.Client
}

// Latest resolves a variant's upstream revision: latest is the highest
// <package>/v<N> tag of a git upstream, the highest version tag of an OCI
// package, the highest of the versions to try that exists for an archive
// URL template (a fixed archive URL has no revisions: ""); anything else
// is used as given.
func (r Direct) Latest(ctx context.Context, up *config.Upstream) (string, error) {
	if up.Revision != "" && up.Revision != config.DefaultRevision {
		return up.Revision, nil
	}
	if up.WorkspaceName != "" {
		return r.workspaceRevision(ctx, up)
	}
	switch locator.Store(up.Repo) {
	case locator.OCI:
		return r.Client.Latest(ctx, up.Repo, "/"+strings.Trim(up.Package, "/"), nil)
	case locator.HTTP:
		if !locator.IsTemplate(up.Repo) {
			return "", nil
		}
		return r.Client.Latest(ctx, up.Repo, "/"+strings.Trim(up.Package, "/"), up.Versions)
	}
	repo, err := r.Git.Repo(ctx, up.Repo)
	if err != nil {
		return "", err
	}
	refs, err := repo.Refs()
	if err != nil {
		return "", err
	}
	best, i := porch.LatestOf(strings.Trim(up.Package, "/"), refs, func(r fetch.GitRef) string { return r.Name })
	if i < 0 {
		return "", fmt.Errorf("upstream %s has no published revision of %s (no tag %s/v<N>)", up.Repo, up.Package, up.Package)
	}
	return porch.RevisionName(best), nil
}

// workspaceRevision resolves upstream.workspaceName on a git upstream.
func (r Direct) workspaceRevision(ctx context.Context, up *config.Upstream) (string, error) {
	repo, err := r.Git.Repo(ctx, up.Repo)
	if err != nil {
		return "", err
	}
	refs, err := repo.Refs()
	if err != nil {
		return "", err
	}
	tags := make([]Tagged, len(refs))
	for i, ref := range refs {
		tags[i] = Tagged{Name: ref.Name, Commit: ref.Commit}
	}
	return WorkspaceRevision(strings.Trim(up.Package, "/"), up.WorkspaceName, tags, repo.CommitMessage)
}
