package engine

import (
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/porch"
)

// CloneTask is the Porch clone task recording where p came from, in
// porchctl rpkg clone's shape: upstreamRef.git for git, upstreamRef.oci
// (the image pinned by digest) for OCI; an archive, which Porch has no
// type for, is recorded as its URL and digest under upstreamRef.http.
func (p FetchedPackage) CloneTask() porch.Task {
	switch p.Store {
	case locator.OCI:
		return porch.CloneOCITask(locator.ImageName(p.Repo, p.Dir) + "@" + p.Resolved.Commit)
	case locator.HTTP:
		return porch.CloneHTTPTask(locator.Expand(p.Repo, p.Resolved.Ref), p.Dir, p.Resolved.Commit)
	}
	return porch.CloneGitTask(p.Repo, p.Dir, p.Resolved.Ref)
}
