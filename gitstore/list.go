package gitstore

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/porch"
)

// PackageRevision is one revision of a package in a repository.
type PackageRevision struct {
	porch.RefInfo
	Ref    string // the ref it lives on
	Commit string
	// Trailer is the revision's kpt trailer, when its commit has one.
	Trailer *porch.Trailer
}

// Package is the "Package" view asked for in Porch: one row per package.
type Package struct {
	Name string
	// Latest is the highest published revision, when Published (v0 is a
	// revision, as in Porch).
	Latest int
	// Published is whether the package has a published revision.
	Published bool
	Revisions []PackageRevision
	// Drafts and Proposals are open workspaces.
	Drafts    []string
	Proposals []string
	// Upstream is the latest revision's Kptfile upstream (repo, directory
	// and ref), when it has one.
	Upstream string
	// NewerUpstream is the upstream's latest revision when it is newer than
	// the one the package follows ("" when up to date or unknown).
	NewerUpstream string

	upstream *upstreamRef
}

type upstreamRef struct{ repo, dir, ref string }

// Listing is a repository's packages and what could not be read.
type Listing struct {
	Packages []Package
	// Warnings name refs or commits that could not be understood.
	Warnings []string
}

// List reads a repository's package revisions from its refs, as Porch
// does: tags <pkg>/v<N>, drafts/, proposed/ and deletionProposed/
// branches; packages that exist only on the given branch (a Kptfile, no
// tag) are listed with no revision.
func List(ctx context.Context, repo *fetch.Repo, branch string) (*Listing, error) {
	refs, err := repo.Refs()
	if err != nil {
		return nil, err
	}
	l := &Listing{}
	byName := map[string]*Package{}
	get := func(name string) *Package {
		p, ok := byName[name]
		if !ok {
			p = &Package{Name: name}
			byName[name] = p
		}
		return p
	}
	var branchCommit string
	for _, r := range refs {
		if r.Name == "refs/heads/"+branch {
			branchCommit = r.Commit
		}
		info, ok := porch.ParseRef(r.Name)
		if !ok {
			continue
		}
		pr := PackageRevision{RefInfo: info, Ref: r.Name, Commit: r.Commit}
		msg, err := repo.CommitMessage(r.Commit)
		if err != nil {
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s: %v", r.Name, err))
		} else if t, found, err := porch.ParseTrailer(msg); err != nil {
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s (commit %s): %v", r.Name, r.Commit[:12], err))
		} else if found {
			pr.Trailer = &t
		}
		p := get(info.Package)
		p.Revisions = append(p.Revisions, pr)
		switch info.Lifecycle {
		case porch.Draft:
			p.Drafts = append(p.Drafts, info.Workspace)
		case porch.Proposed:
			p.Proposals = append(p.Proposals, info.Workspace)
		}
	}
	if branchCommit != "" {
		files, err := repo.Tree(ctx, branchCommit, "/")
		if err != nil {
			return nil, err
		}
		for _, dir := range porch.PackagesIn("", files) {
			get(dir)
		}
	}
	for _, p := range byName {
		sort.Slice(p.Revisions, func(i, j int) bool { return p.Revisions[i].Ref < p.Revisions[j].Ref })
		sort.Strings(p.Drafts)
		sort.Strings(p.Proposals)
		var at int
		p.Latest, at = porch.LatestOf(p.Name, p.Revisions, func(r PackageRevision) string { return r.Ref })
		if p.Published = at >= 0; p.Published {
			p.Upstream = upstreamOf(ctx, repo, p)
		}
		l.Packages = append(l.Packages, *p)
	}
	sort.Slice(l.Packages, func(i, j int) bool { return l.Packages[i].Name < l.Packages[j].Name })
	sort.Strings(l.Warnings)
	return l, nil
}

// CheckUpstreams fills NewerUpstream for packages whose upstream follows
// Porch-style revisions (<dir>/v<N> tags): the highest such tag, when it is
// newer than the revision followed. Upstreams that cannot be read become
// warnings.
func (l *Listing) CheckUpstreams(ctx context.Context, f *fetch.Client) {
	for i := range l.Packages {
		p := &l.Packages[i]
		u := p.upstream
		if u == nil {
			continue
		}
		repo, err := f.Repo(ctx, u.repo)
		if err != nil {
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s: upstream %s: %v", p.Name, u.repo, err))
			continue
		}
		refs, err := repo.Refs()
		if err != nil {
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s: upstream %s: %v", p.Name, u.repo, err))
			continue
		}
		pkg := strings.Trim(u.dir, "/")
		best, _ := porch.LatestOf(pkg, refs, func(r fetch.GitRef) string { return r.Name })
		current, ok := porch.ParseRevision(strings.TrimPrefix(u.ref, pkg+"/"))
		if ok && best > current {
			p.NewerUpstream = porch.RevisionName(best)
		}
	}
}

// upstreamOf reads the latest published revision's Kptfile upstream.
func upstreamOf(ctx context.Context, repo *fetch.Repo, p *Package) string {
	for _, r := range p.Revisions {
		if r.Lifecycle != porch.Published || r.Revision != p.Latest {
			continue
		}
		files, err := repo.Tree(ctx, r.Commit, "/"+p.Name)
		if err != nil {
			return ""
		}
		kf, err := kptpkg.DecodeKptfile(p.Name+"/Kptfile", files[kptpkg.KptfileName])
		if err != nil || kf.Upstream == nil || kf.Upstream.Git == nil {
			return ""
		}
		g := kf.Upstream.Git
		p.upstream = &upstreamRef{repo: g.Repo, dir: g.Directory, ref: g.Ref}
		return strings.TrimSuffix(g.Repo, ".git") + ".git" + g.Directory + "@" + g.Ref
	}
	return ""
}
