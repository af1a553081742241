package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/fetch/sources"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/porch"
	"github.com/kptbot/kptbot/variant"
)

// Fetcher is the engine's Fetcher for upstreams on the bot's forges
// (owner/name, or a clone URL it knows): content comes through the forge
// adapter (one git fetch with the bot's credentials), versions resolve as
// kpt's do. Anything else goes to the plain git fetcher.
type Fetcher struct {
	x     *Index
	repos []Entry
	bound bindings
	// down is the repository the fetched packages are for: only what its
	// readers may read is fetched through the bot's forges.
	down forge.Repo
	// other fetches git URLs, OCI artifacts and HTTP archives.
	other *sources.Client
}

// Fetcher is the Fetcher for the packages of down (on forge f): the
// indexed repositories and down itself.
func (x *Index) Fetcher(ctx context.Context, f forge.Forge, down forge.Repo) (*Fetcher, error) {
	repos, bound, err := x.view(ctx)
	if err != nil {
		return nil, err
	}
	other, err := sources.New(sources.Options{})
	if err != nil {
		return nil, err
	}
	return &Fetcher{x: x, repos: append(slices.Clip(repos), Entry{F: f, Repo: down}), bound: bound, down: down, other: other}, nil
}

// Lookup is the repository on the bot's forges an upstream reference
// means (names.go: a renamed upstream under its old name too).
func (ff *Fetcher) Lookup(ref string) (Entry, bool) {
	for _, ix := range ff.repos {
		if ff.bound.refersTo(ref, ix.Repo) {
			return ix, true
		}
	}
	return Entry{}, false
}

// source is lookup for reading: a repository on the bot's forges that
// the downstream may not read is an error, never a fall-through to
// another fetcher.
func (ff *Fetcher) source(ref string) (Entry, bool, error) {
	ix, ok := ff.Lookup(ref)
	if !ok {
		return ix, false, nil
	}
	if err := ix.ReadableBy(ff.down); err != nil {
		return ix, true, err
	}
	return ix, true, nil
}

// Fetch implements engine.Fetcher.
func (ff *Fetcher) Fetch(ctx context.Context, repo, dir, version string) (map[string][]byte, fetch.Resolved, error) {
	ix, ok, err := ff.source(repo)
	if err != nil {
		return nil, fetch.Resolved{}, err
	}
	if !ok {
		return ff.other.Fetch(ctx, repo, dir, version)
	}
	res, err := ff.resolve(ctx, ix, strings.Trim(dir, "/"), version)
	if err != nil {
		return nil, fetch.Resolved{}, err
	}
	snap, err := ix.F.ReadTree(ctx, ix.Repo, res.Commit, strings.Trim(dir, "/"))
	if err != nil {
		return nil, fetch.Resolved{}, err
	}
	if len(snap.Files) == 0 {
		return nil, fetch.Resolved{}, fmt.Errorf("%s has no directory %s at %s", ix.Repo.FullName, dir, res.Ref)
	}
	return snap.Files, res, nil
}

// resolve is kpt's rule: the tag <dir>/<version> first, then version as a
// tag, a branch, or a commit.
func (ff *Fetcher) resolve(ctx context.Context, ix Entry, dir, version string) (fetch.Resolved, error) {
	if ref, sha, err := ff.tagAmong(ctx, ix, dir+"/"+version, version); err != nil || sha != "" {
		return fetch.Resolved{Ref: ref, Commit: sha}, err
	}
	branches, err := ix.F.ListBranches(ctx, ix.Repo)
	if err != nil {
		return fetch.Resolved{}, err
	}
	for _, br := range branches {
		if br.Name == version {
			return fetch.Resolved{Ref: version, Commit: br.SHA}, nil
		}
	}
	if len(version) == 40 {
		return fetch.Resolved{Ref: version, Commit: version}, nil
	}
	return fetch.Resolved{}, fmt.Errorf("%s: no tag %s/%s, tag, branch or commit %q", ix.Repo.FullName, dir, version, version)
}

// Latest resolves a variant's revision policy: latest is the highest
// <pkg>/v<N> tag of the upstream; anything else is used as given.
func (ff *Fetcher) Latest(ctx context.Context, up *config.Upstream) (string, error) {
	direct := variant.Direct{Client: ff.other}
	if st := locator.Store(up.Repo); st == locator.OCI || st == locator.HTTP {
		return direct.Latest(ctx, up)
	}
	ix, ok, err := ff.source(up.Repo)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return direct.Latest(ctx, up)
	case up.Revision != "" && up.Revision != config.DefaultRevision:
		return up.Revision, nil
	}
	tags, err := ff.x.ListTags(ctx, ix.F, ix.Repo)
	if err != nil {
		return "", err
	}
	pkg := strings.Trim(up.Package, "/")
	if up.WorkspaceName != "" {
		return ff.workspaceRevision(ctx, ix, pkg, up.WorkspaceName, tags)
	}
	best, i := porch.LatestOf(pkg, tags, func(t forge.Tag) string { return t.Name })
	if i < 0 {
		return "", fmt.Errorf("upstream %s has no published revision of %s (no tag %s/v<N>)", up.Repo, pkg, pkg)
	}
	return porch.RevisionName(best), nil
}

// Log lists the upstream's commits between two revisions of a package
// (tags <pkg>/<from> and <pkg>/<to>, or the revisions as given), for the
// update change's description; upstreams off the bot's forges and any
// failure give none: the range is informative, never a reason to stop.
func (ff *Fetcher) Log(ctx context.Context, up *config.Upstream, from, to string) []forge.Commit {
	ix, ok, err := ff.source(up.Repo)
	if err != nil || !ok || from == "" {
		return nil
	}
	pkg := strings.Trim(up.Package, "/")
	a, errA := ff.resolve(ctx, ix, pkg, from)
	b, errB := ff.resolve(ctx, ix, pkg, to)
	if errA != nil || errB != nil {
		return nil
	}
	commits, err := ix.F.Log(ctx, ix.Repo, a.Commit, b.Commit)
	if err != nil {
		return nil
	}
	return commits
}

// workspaceRevision resolves upstream.workspaceName on a forge: the
// published revision whose commit's kpt trailer names the workspace.
func (ff *Fetcher) workspaceRevision(ctx context.Context, ix Entry, pkg, ws string, list []forge.Tag) (string, error) {
	tags := make([]variant.Tagged, len(list))
	for i, t := range list {
		tags[i] = variant.Tagged{Name: t.Name, Commit: t.SHA}
	}
	return variant.WorkspaceRevision(pkg, ws, tags, func(sha string) (string, error) {
		commits, err := ix.F.Log(ctx, ix.Repo, "", sha)
		if err != nil || len(commits) == 0 {
			return "", errors.Join(err, fmt.Errorf("no commit %s", sha))
		}
		return commits[0].Message, nil
	})
}
