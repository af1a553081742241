package gitstore

// Publishing to a remote: the revision's tag, the registered branch and
// the proposal's deletion go in one push, so a published tag is never
// moved and nothing is half-applied.

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/forge/gitrepo"
	"github.com/kptbot/kptbot/porch"
)

// publish pushes approval commit h of pkg/ws as revision n: tag <pkg>/v<n>
// created (create only: whatever value it has on the remote, even an
// ancestor of h, the push fails), the registered branch moved from base
// to h, the proposal prop deleted. The remote applies the three
// atomically; a remote without atomic pushes gets them one by one in that
// order, and unpublish handles a prefix. The clone is updated only once
// the remote took them.
func (s *Store) publish(ctx context.Context, pkg, ws string, n int, base *plumbing.Reference, h plumbing.Hash, prop *plumbing.Reference) error {
	tag := plumbing.ReferenceName(porch.TagRef(pkg, n))
	branch := plumbing.NewBranchReferenceName(s.branch)
	var old plumbing.Hash
	if base != nil {
		old = base.Hash()
	}
	updates := []gitrepo.RefUpdate{
		{Name: tag, New: h},
		{Name: branch, Old: old, New: h},
		{Name: prop.Name(), Old: prop.Hash()},
	}
	if err := s.pushRefs(ctx, updates...); err != nil {
		return s.unpublish(ctx, pkg, ws, n, h, err)
	}
	for _, u := range updates {
		var err error
		if u.New.IsZero() {
			err = s.git.Storer.RemoveReference(u.Name)
		} else {
			err = s.git.Storer.SetReference(plumbing.NewHashReference(u.Name, u.New))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// unpublish is publish's failure path, err its push's error. A remote
// that applied the updates one by one may have taken a prefix: a tag
// without the branch is taken back out (the revision number is free
// again); a tag and branch without the proposal's deletion stay published,
// and the next approve of the proposal only deletes it (alreadyPublished).
func (s *Store) unpublish(ctx context.Context, pkg, ws string, n int, h plumbing.Hash, err error) error {
	tag := plumbing.ReferenceName(porch.TagRef(pkg, n))
	if refs, rerr := s.remoteRefs(ctx); rerr == nil && refs[tag] == h {
		if refs[plumbing.NewBranchReferenceName(s.branch)] == h {
			return fmt.Errorf("approving %s/%s: published as %s, but deleting the proposal failed (run it again to finish): %w",
				pkg, ws, porch.Tag(pkg, n), err)
		}
		if derr := s.pushRefs(ctx, gitrepo.RefUpdate{Name: tag, Old: h}); derr != nil {
			return fmt.Errorf("approving %s/%s: tag %s was pushed without %s and could not be taken back (%v): %w",
				pkg, ws, porch.Tag(pkg, n), s.branch, derr, err)
		}
	}
	if errors.Is(err, ErrConflict) {
		return fmt.Errorf("approving %s/%s as %s: %w (another approval published it, or %s or the proposal moved, since this run read the repository; nothing was changed, run it again)",
			pkg, ws, porch.Tag(pkg, n), err, s.branch)
	}
	return fmt.Errorf("approving %s/%s as %s: %w", pkg, ws, porch.Tag(pkg, n), err)
}

// pushRefs sends updates to the remote as compare-and-swaps, all or none
// where the remote can (gitrepo.PushRefs); a lost one is ErrConflict.
func (s *Store) pushRefs(ctx context.Context, updates ...gitrepo.RefUpdate) error {
	op := fmt.Sprintf("pushing %s to %s", updates[0].Name, fetch.Redact(s.repo.URL))
	if len(updates) > 1 {
		op = fmt.Sprintf("pushing %d refs to %s", len(updates), fetch.Redact(s.repo.URL))
	}
	err := gitrepo.PushRefs(ctx, s.git.Storer, s.repo.PushURL, fetch.AuthFor(s.repo.PushURL), updates)
	return gitrepo.PushError(err, ErrConflict, op)
}

// remoteRefs lists where the remote's refs are now.
func (s *Store) remoteRefs(ctx context.Context) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	return gitrepo.Remote{URL: s.repo.PushURL, Auth: fetch.AuthFor(s.repo.PushURL)}.Refs(ctx)
}

// alreadyPublished reports whether revision n of pkg is the approval of
// workspace ws with the package as proposal prop has it, and is on the
// registered branch: the proposal then is a leftover of a run that
// stopped before deleting it.
func (s *Store) alreadyPublished(pkg, ws string, n int, prop plumbing.Hash) (bool, error) {
	if n == 0 {
		return false, nil
	}
	tag, err := s.ref(porch.TagRef(pkg, n))
	if err != nil || tag == nil {
		return false, err
	}
	c, err := s.git.CommitObject(tag.Hash())
	if err != nil {
		return false, nil // an annotated tag: not one kptbot made
	}
	t, found, err := porch.ParseTrailer(c.Message)
	if err != nil || !found || t.Package != pkg || t.WorkspaceName != ws || t.Revision != porch.RevisionName(n) {
		return false, nil
	}
	if same, err := s.samePackage(pkg, c.Hash, prop); err != nil || !same {
		return false, err
	}
	base, err := s.ref("refs/heads/" + s.branch)
	if err != nil || base == nil {
		return false, err
	}
	tip, err := s.git.CommitObject(base.Hash())
	if err != nil {
		return false, err
	}
	return c.IsAncestor(tip)
}

// samePackage reports whether commits a and b hold the same tree at pkg.
func (s *Store) samePackage(pkg string, a, b plumbing.Hash) (bool, error) {
	var trees [2]plumbing.Hash
	for i, h := range []plumbing.Hash{a, b} {
		root, err := s.treeOf(h)
		if err != nil {
			return false, err
		}
		e, err := root.FindEntry(pkg)
		if err != nil {
			return false, nil // no package there
		}
		trees[i] = e.Hash
	}
	return trees[0] == trees[1], nil
}
