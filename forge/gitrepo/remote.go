// Package gitrepo is the git plumbing kptbot does over a remote's smart
// protocol, in memory: read a tree at a ref, push files as one commit with
// a lease on the branch's old SHA, delete a branch only where it was,
// update refs as compare-and-swaps (a tag is only ever created), read a
// log. Both forge adapters embed it to move content over git instead of
// one REST call per file, and package gitstore builds Porch's lifecycle on
// its tree writing. It knows nothing of packages: no engine, no Porch.
package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/forge"
)

// Remote is a git remote and the credentials to reach it: what forge
// adapters use to move content over git instead of one REST call per file.
type Remote struct {
	URL  string
	Auth transport.AuthMethod
}

// fetchRefs fetches every branch and tag of the remote into memory.
func (r Remote) fetchRefs(ctx context.Context) (*git.Repository, error) {
	repo, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		return nil, err
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.URL}}); err != nil {
		return nil, fmt.Errorf("configuring remote %s: %w", fetch.Redact(r.URL), err)
	}
	err = repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: "origin", Auth: r.Auth, Tags: git.NoTags,
		RefSpecs: []config.RefSpec{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"},
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return nil, fmt.Errorf("fetching %s: %w", fetch.Redact(r.URL), err)
	}
	return repo, nil
}

// fetchOne fetches just the remote ref that ref names (a branch, a tag,
// or a ref whose tip is the SHA ref), one commit deep: reading a package
// should not cost the repository's whole history. ok is false when no
// ref matches (a SHA deeper in history), and the caller fetches all.
func (r Remote) fetchOne(ctx context.Context, ref string) (repo *git.Repository, ok bool, err error) {
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{r.URL}})
	refs, err := rem.ListContext(ctx, &git.ListOptions{Auth: r.Auth})
	if err != nil {
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("listing refs of %s: %w", fetch.Redact(r.URL), err)
	}
	var name plumbing.ReferenceName
	for _, want := range []plumbing.ReferenceName{plumbing.NewBranchReferenceName(ref), plumbing.NewTagReferenceName(ref)} {
		for _, rf := range refs {
			if rf.Name() == want {
				name = want
				break
			}
		}
		if name != "" {
			break
		}
	}
	if name == "" && plumbing.IsHash(ref) {
		for _, rf := range refs {
			if rf.Type() == plumbing.HashReference && rf.Hash().String() == ref && (rf.Name().IsBranch() || rf.Name().IsTag()) {
				name = rf.Name()
				break
			}
		}
	}
	if name == "" {
		return nil, false, nil
	}
	repo, err = git.Init(memory.NewStorage(), nil)
	if err != nil {
		return nil, false, err
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.URL}}); err != nil {
		return nil, false, err
	}
	err = repo.FetchContext(ctx, &git.FetchOptions{RemoteName: "origin", Auth: r.Auth, Tags: git.NoTags, Depth: 1,
		RefSpecs: []config.RefSpec{config.RefSpec("+" + name + ":" + name)}})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, false, fmt.Errorf("fetching %s of %s: %w", name, fetch.Redact(r.URL), err)
	}
	return repo, true, nil
}

// ReadTree returns the files under dir at ref (a branch, tag or full SHA
// reachable from one), with paths relative to dir.
func (r Remote) ReadTree(ctx context.Context, ref, dir string) (forge.Snapshot, error) {
	repo, ok, err := r.fetchOne(ctx, ref)
	if err != nil {
		return forge.Snapshot{}, err
	}
	if !ok {
		if repo, err = r.fetchRefs(ctx); err != nil {
			return forge.Snapshot{}, err
		}
	}
	c, err := resolveCommit(repo, ref)
	if err != nil {
		return forge.Snapshot{}, fmt.Errorf("%w: ref %q in %s", forge.ErrNotFound, ref, fetch.Redact(r.URL))
	}
	snap := forge.Snapshot{Commit: c.Hash.String(), Files: map[string][]byte{}}
	tree, err := c.Tree()
	if err != nil {
		return forge.Snapshot{}, fmt.Errorf("reading the tree of %s: %w", c.Hash, err)
	}
	if dir = strings.Trim(dir, "/"); dir != "" {
		if tree, err = tree.Tree(dir); err != nil {
			return snap, nil // no such directory: no files
		}
	}
	if snap.Files, err = readFiles(tree, forge.TreeLimitsFrom(ctx)); err != nil {
		return forge.Snapshot{}, fmt.Errorf("reading %s at %s: %w", dir, ref, err)
	}
	return snap, nil
}

// DeleteBranch deletes branch only while it is at expectedSHA; a branch
// already gone is success, one that moved is forge.ErrConflict.
func (r Remote) DeleteBranch(ctx context.Context, branch, expectedSHA string) error {
	repo, err := r.fetchRefs(ctx)
	if err != nil {
		return err
	}
	ref := plumbing.NewBranchReferenceName(branch)
	cur, err := repo.Reference(ref, false)
	if err != nil {
		return nil
	}
	if cur.Hash().String() != expectedSHA {
		return fmt.Errorf("%w: branch %s of %s is at %s, expected %s (someone pushed; not deleted)",
			forge.ErrConflict, branch, fetch.Redact(r.URL), cur.Hash(), expectedSHA)
	}
	err = PushRefs(ctx, repo.Storer, r.URL, r.Auth, []RefUpdate{{Name: ref, Old: cur.Hash()}})
	return PushError(err, forge.ErrConflict, fmt.Sprintf("deleting %s in %s", branch, fetch.Redact(r.URL)))
}

// maxLog bounds a commit log: a change description lists at most this many.
const maxLog = 100

// Log returns the commits reachable from to but not from from (both a
// branch, tag or SHA; from "" means all), newest first, at most 100.
func (r Remote) Log(ctx context.Context, from, to string) ([]forge.Commit, error) {
	repo, err := r.fetchRefs(ctx)
	if err != nil {
		return nil, err
	}
	head, err := resolveCommit(repo, to)
	if err != nil {
		return nil, fmt.Errorf("%w: %q in %s", forge.ErrNotFound, to, fetch.Redact(r.URL))
	}
	stop := map[plumbing.Hash]bool{}
	if from != "" {
		base, err := resolveCommit(repo, from)
		if err != nil {
			return nil, fmt.Errorf("%w: %q in %s", forge.ErrNotFound, from, fetch.Redact(r.URL))
		}
		iter := object.NewCommitPreorderIter(base, nil, nil)
		err = iter.ForEach(func(c *object.Commit) error { stop[c.Hash] = true; return nil })
		if err != nil {
			return nil, err
		}
	}
	var out []forge.Commit
	iter := object.NewCommitPreorderIter(head, stop, nil)
	err = iter.ForEach(func(c *object.Commit) error {
		if stop[c.Hash] {
			return nil
		}
		fc := forge.Commit{SHA: c.Hash.String(), Message: c.Message, Author: c.Author.Name}
		for _, p := range c.ParentHashes {
			fc.Parents = append(fc.Parents, p.String())
		}
		out = append(out, fc)
		if len(out) == maxLog {
			return storer.ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return nil, err
	}
	return out, nil
}
