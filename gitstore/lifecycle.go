package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/forge/gitrepo"
	"github.com/kptbot/kptbot/porch"
)

// ErrConflict is returned when a ref changed under us (another writer won
// the compare-and-swap); nothing was overwritten.
var ErrConflict = errors.New("the repository changed concurrently")

// ErrNotFound is returned for a package revision that does not exist.
var ErrNotFound = errors.New("package revision not found")

// Store writes Porch's layout into a repository: a local one (a path or
// file:// URL, bare or not) in place, a remote one (http(s), with a token
// from the environment) through an in-memory clone and one push per ref.
// Every ref update is a compare-and-swap against the value read (locally
// with git's ref locking, remotely with the push's expected old value), so
// two writers never clobber each other.
type Store struct {
	repo   *fetch.Repo
	git    *git.Repository
	branch string
	// lock serializes writers on this machine (git's own ref updates are
	// compare-and-swap, but "create the tag vN+1" is not); empty for remote
	// repositories, where the server's checks serialize writers.
	lock string
	// remote is set for repositories written through pushes.
	remote bool
	// Author signs commits; Now dates them.
	Author object.Signature
	Now    func() time.Time
}

// OpenStore opens the repository at url for writing. branch is the
// registered branch (usually main).
func OpenStore(ctx context.Context, url, branch string) (*Store, error) {
	repo, err := fetch.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if !repo.IsLocal() {
		return &Store{
			repo: repo, git: repo.Git(), branch: branch, remote: true,
			Author: object.Signature{Name: "kptbot", Email: "kptbot@localhost"},
			Now:    time.Now,
		}, nil
	}
	dir := strings.TrimPrefix(url, "file://")
	if fi, err := os.Stat(filepath.Join(dir, ".git")); err == nil && fi.IsDir() {
		dir = filepath.Join(dir, ".git")
	} else if _, err := os.Stat(dir); err != nil {
		dir = dir + ".git"
	}
	return &Store{
		repo: repo, git: repo.Git(), branch: branch, lock: filepath.Join(dir, "kptbot.lock"),
		Author: object.Signature{Name: "kptbot", Email: "kptbot@localhost"},
		Now:    time.Now,
	}, nil
}

// CreateDraft creates branch drafts/<pkg>/<ws> from the registered
// branch's tip with the package's files replaced by files, as Porch's
// init and clone do. task is the trailer's task (e.g. {"type":"init"});
// body, when given, is written between Porch's subject and the trailer
// (what a person should know about the revision, e.g. merge conflicts).
func (s *Store) CreateDraft(ctx context.Context, pkg, ws string, files map[string][]byte, task []byte, body ...string) (commit string, err error) {
	err = s.locked(ctx, func() error {
		commit, err = s.createDraft(ctx, pkg, ws, files, task, body)
		return err
	})
	return commit, err
}

func (s *Store) createDraft(ctx context.Context, pkg, ws string, files map[string][]byte, task []byte, body []string) (string, error) {
	if err := porch.CheckNames(pkg, ws); err != nil {
		return "", err
	}
	subject, err := commitSubject(task, body)
	if err != nil {
		return "", err
	}
	for _, name := range []string{draftRef(pkg, ws), proposedRef(pkg, ws)} {
		if r, err := s.ref(name); err != nil {
			return "", err
		} else if r != nil {
			return "", fmt.Errorf("%w: %s already exists", ErrConflict, name)
		}
	}
	base, err := s.ref("refs/heads/" + s.branch)
	if err != nil {
		return "", err
	}
	var parent plumbing.Hash
	if base != nil {
		parent = base.Hash()
	}
	root, err := s.treeOf(parent)
	if err != nil {
		return "", err
	}
	tree, err := gitrepo.ReplaceDir(s.git.Storer, root, pkg, files)
	if err != nil {
		return "", err
	}
	h, err := s.commit(parent, tree, subject, porch.Trailer{Package: pkg, WorkspaceName: ws, Task: task})
	if err != nil {
		return "", err
	}
	return h.String(), s.setRef(ctx, draftRef(pkg, ws), nil, h)
}

// UpdateDraft commits new package files onto an existing draft, as
// Porch's push and edit do; body as for CreateDraft.
func (s *Store) UpdateDraft(ctx context.Context, pkg, ws string, files map[string][]byte, task []byte, body ...string) (commit string, err error) {
	err = s.locked(ctx, func() error {
		commit, err = s.updateDraft(ctx, pkg, ws, files, task, body)
		return err
	})
	return commit, err
}

func (s *Store) updateDraft(ctx context.Context, pkg, ws string, files map[string][]byte, task []byte, body []string) (string, error) {
	subject, err := commitSubject(task, body)
	if err != nil {
		return "", err
	}
	name := draftRef(pkg, ws)
	old, err := s.ref(name)
	if err != nil {
		return "", err
	}
	if old == nil {
		return "", fmt.Errorf("%w: no draft %s/%s (branch %s)", ErrNotFound, pkg, ws, name)
	}
	root, err := s.treeOf(old.Hash())
	if err != nil {
		return "", err
	}
	tree, err := gitrepo.ReplaceDir(s.git.Storer, root, pkg, files)
	if err != nil {
		return "", err
	}
	if root != nil && tree == root.Hash {
		return old.Hash().String(), nil // nothing changed: no empty commit
	}
	h, err := s.commit(old.Hash(), tree, subject, porch.Trailer{Package: pkg, WorkspaceName: ws, Task: task})
	if err != nil {
		return "", err
	}
	return h.String(), s.setRef(ctx, name, old, h)
}

// Propose moves a draft to proposed/<pkg>/<ws>.
func (s *Store) Propose(ctx context.Context, pkg, ws string) error {
	return s.locked(ctx, func() error { return s.move(ctx, draftRef(pkg, ws), proposedRef(pkg, ws), pkg, ws) })
}

// Reject moves a proposal back to drafts/<pkg>/<ws>.
func (s *Store) Reject(ctx context.Context, pkg, ws string) error {
	return s.locked(ctx, func() error { return s.move(ctx, proposedRef(pkg, ws), draftRef(pkg, ws), pkg, ws) })
}

func (s *Store) move(ctx context.Context, from, to, pkg, ws string) error {
	old, err := s.ref(from)
	if err != nil {
		return err
	}
	if old == nil {
		return fmt.Errorf("%w: %s/%s has no branch %s", ErrNotFound, pkg, ws, from)
	}
	if err := s.setRef(ctx, to, nil, old.Hash()); err != nil {
		return err
	}
	return s.removeRef(ctx, from, old)
}

// Approve publishes a proposal as Porch does: the package's tree is
// re-committed onto the tip of the registered branch ("Approving package
// revision <pkg>/<N>"), tagged <pkg>/v<N> with N one more than the highest
// published revision, and the proposed branch is deleted. It returns N.
// A tag that already exists is never moved (publish); a proposal an
// earlier run published but did not delete is only deleted.
func (s *Store) Approve(ctx context.Context, pkg, ws string) (n int, err error) {
	err = s.locked(ctx, func() error {
		n, err = s.approve(ctx, pkg, ws)
		return err
	})
	return n, err
}

func (s *Store) approve(ctx context.Context, pkg, ws string) (int, error) {
	prop, err := s.ref(proposedRef(pkg, ws))
	if err != nil {
		return 0, err
	}
	if prop == nil {
		return 0, fmt.Errorf("%w: %s/%s is not proposed (no branch %s); propose it first", ErrNotFound, pkg, ws, proposedRef(pkg, ws))
	}
	files, err := s.repo.Tree(ctx, prop.Hash().String(), "/"+pkg)
	if err != nil {
		return 0, err
	}
	n, err := s.latest(pkg)
	if err != nil {
		return 0, err
	}
	if done, err := s.alreadyPublished(pkg, ws, n, prop.Hash()); err != nil || done {
		// An earlier run published it and stopped before deleting the
		// proposal: finish that run instead of publishing it twice.
		if err == nil {
			err = s.removeRef(ctx, proposedRef(pkg, ws), prop)
		}
		return n, err
	}
	n++
	base, err := s.ref("refs/heads/" + s.branch)
	if err != nil {
		return 0, err
	}
	var parent plumbing.Hash
	if base != nil {
		parent = base.Hash()
	}
	root, err := s.treeOf(parent)
	if err != nil {
		return 0, err
	}
	tree, err := gitrepo.ReplaceDir(s.git.Storer, root, pkg, files)
	if err != nil {
		return 0, err
	}
	h, err := s.commit(parent, tree, porch.ApproveSubject(pkg, n), porch.Trailer{Package: pkg, WorkspaceName: ws, Revision: porch.RevisionName(n)})
	if err != nil {
		return 0, err
	}
	if s.remote {
		if err := s.publish(ctx, pkg, ws, n, base, h, prop); err != nil {
			return 0, err
		}
		return n, nil
	}
	// The tag first: if another approval took revision N, nothing else moved.
	if err := s.setRef(ctx, porch.TagRef(pkg, n), nil, h); err != nil {
		return 0, err
	}
	if err := s.setRef(ctx, "refs/heads/"+s.branch, base, h); err != nil {
		// Give the revision number back; nothing else moved.
		if tag, terr := s.ref(porch.TagRef(pkg, n)); terr == nil && tag != nil {
			_ = s.removeRef(ctx, porch.TagRef(pkg, n), tag)
		}
		return 0, err
	}
	return n, s.removeRef(ctx, proposedRef(pkg, ws), prop)
}

// latest is the highest published revision of pkg (0: none).
func (s *Store) latest(pkg string) (int, error) {
	refs, err := s.repo.Refs()
	if err != nil {
		return 0, err
	}
	n, _ := porch.LatestOf(pkg, refs, func(r fetch.GitRef) string { return r.Name })
	return n, nil
}

// ProposeDelete proposes deleting published revision n: branch
// deletionProposed/<pkg>/v<n> at the tag.
func (s *Store) ProposeDelete(ctx context.Context, pkg string, n int) error {
	return s.locked(ctx, func() error { return s.proposeDelete(ctx, pkg, n) })
}

func (s *Store) proposeDelete(ctx context.Context, pkg string, n int) error {
	tag, err := s.ref(porch.TagRef(pkg, n))
	if err != nil {
		return err
	}
	if tag == nil {
		return fmt.Errorf("%w: %s/v%d is not published", ErrNotFound, pkg, n)
	}
	return s.setRef(ctx, deletionProposedRef(pkg, n), nil, tag.Hash())
}

// DeleteDraft deletes a draft or proposal branch.
func (s *Store) DeleteDraft(ctx context.Context, pkg, ws string) error {
	return s.locked(ctx, func() error { return s.deleteDraft(ctx, pkg, ws) })
}

func (s *Store) deleteDraft(ctx context.Context, pkg, ws string) error {
	for _, name := range []string{draftRef(pkg, ws), proposedRef(pkg, ws)} {
		r, err := s.ref(name)
		if err != nil {
			return err
		}
		if r != nil {
			return s.removeRef(ctx, name, r)
		}
	}
	return fmt.Errorf("%w: no draft or proposal %s/%s", ErrNotFound, pkg, ws)
}

// DeletePublished deletes published revision n, which must have been
// proposed for deletion: the tag and the deletionProposed branch go, and
// when n is the latest revision the package leaves the registered branch.
func (s *Store) DeletePublished(ctx context.Context, pkg string, n int) error {
	return s.locked(ctx, func() error { return s.deletePublished(ctx, pkg, n) })
}

func (s *Store) deletePublished(ctx context.Context, pkg string, n int) error {
	prop, err := s.ref(deletionProposedRef(pkg, n))
	if err != nil {
		return err
	}
	if prop == nil {
		return fmt.Errorf("%s/v%d: propose the deletion first (kptbot rpkg propose-delete)", pkg, n)
	}
	latest, err := s.latest(pkg)
	if err != nil {
		return err
	}
	if n == latest {
		base, err := s.ref("refs/heads/" + s.branch)
		if err != nil {
			return err
		}
		if base != nil {
			root, err := s.treeOf(base.Hash())
			if err != nil {
				return err
			}
			tree, err := gitrepo.ReplaceDir(s.git.Storer, root, pkg, nil)
			if err != nil {
				return err
			}
			h, err := s.commit(base.Hash(), tree, fmt.Sprintf("Deleting package %s", pkg), porch.Trailer{Package: pkg, Revision: porch.RevisionName(n), Task: porch.TypeTask(porch.TaskTypeDelete).JSON()})
			if err != nil {
				return err
			}
			if err := s.setRef(ctx, "refs/heads/"+s.branch, base, h); err != nil {
				return err
			}
		}
	}
	tag, err := s.ref(porch.TagRef(pkg, n))
	if err != nil {
		return err
	}
	if tag != nil {
		if err := s.removeRef(ctx, porch.TagRef(pkg, n), tag); err != nil {
			return err
		}
	}
	return s.removeRef(ctx, deletionProposedRef(pkg, n), prop)
}
