package gitstore

// The store's writes at the level of git: the writer lock, ref updates as
// compare-and-swaps (pushed to a remote with the expected old value), and
// commits carrying Porch's trailer.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/forge/gitrepo"
	"github.com/kptbot/kptbot/porch"
)

// locked runs fn holding the repository's writer lock, waiting for it up to
// a minute: the lock file is created exclusively, so concurrent kptbot
// processes take turns.
func (s *Store) locked(ctx context.Context, fn func() error) error {
	if s.remote {
		return fn()
	}
	deadline := time.Now().Add(time.Minute)
	for {
		f, err := os.OpenFile(s.lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			defer os.Remove(s.lock)
			return fn()
		}
		if !os.IsExist(err) {
			return fmt.Errorf("taking the writer lock %s: %w", s.lock, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s has been held for a minute; remove it if no kptbot is running", ErrConflict, s.lock)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Repo returns the repository being written, for reads.
func (s *Store) Repo() *fetch.Repo { return s.repo }

func (s *Store) ref(name string) (*plumbing.Reference, error) {
	r, err := s.git.Storer.Reference(plumbing.ReferenceName(name))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	return r, err
}

// setRef moves name from old (nil: must not exist) to h.
func (s *Store) setRef(ctx context.Context, name string, old *plumbing.Reference, h plumbing.Hash) error {
	if !s.remote {
		return s.writeLocalRef(name, old, h)
	}
	newRef := plumbing.NewHashReference(plumbing.ReferenceName(name), h)
	if old == nil {
		if cur, err := s.ref(name); err != nil {
			return err
		} else if cur != nil {
			return fmt.Errorf("%w: %s already exists", ErrConflict, name)
		}
		if err := s.git.Storer.SetReference(newRef); err != nil {
			return err
		}
	} else if err := s.git.Storer.CheckAndSetReference(newRef, old); err != nil {
		return fmt.Errorf("%w: %s moved: %v", ErrConflict, name, err)
	}
	return s.push(ctx, name, name, old)
}

// push sends one ref update (src "" deletes dst) to the remote, requiring
// the remote ref to still be old (absent when old is nil: create only, so
// a tag that exists on the remote is never moved).
func (s *Store) push(ctx context.Context, src, dst string, old *plumbing.Reference) error {
	u := gitrepo.RefUpdate{Name: plumbing.ReferenceName(dst)}
	if old != nil {
		u.Old = old.Hash()
	}
	if src != "" {
		r, err := s.ref(src)
		if err != nil || r == nil {
			return fmt.Errorf("pushing %s: no local ref %s: %v", dst, src, err)
		}
		u.New = r.Hash()
	}
	return s.pushRefs(ctx, u)
}

// removeRef deletes name if it still points where it did.
func (s *Store) removeRef(ctx context.Context, name string, old *plumbing.Reference) error {
	cur, err := s.ref(name)
	if err != nil {
		return err
	}
	if cur == nil || cur.Hash() != old.Hash() {
		return fmt.Errorf("%w: %s moved", ErrConflict, name)
	}
	if err := s.git.Storer.RemoveReference(plumbing.ReferenceName(name)); err != nil {
		return err
	}
	if s.remote {
		return s.push(ctx, "", name, old)
	}
	return nil
}

// commit writes a commit of tree with parent and Porch's trailer.
func (s *Store) commit(parent plumbing.Hash, tree plumbing.Hash, subject string, t porch.Trailer) (plumbing.Hash, error) {
	line, err := porch.FormatTrailer(t)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	sig := s.Author
	sig.When = s.Now()
	c := &object.Commit{Author: sig, Committer: sig, Message: subject + "\n\n" + line + "\n", TreeHash: tree}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	o := s.git.Storer.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.git.Storer.SetEncodedObject(o)
}

// treeOf returns the root tree of a commit (nil for the zero hash).
func (s *Store) treeOf(commit plumbing.Hash) (*object.Tree, error) {
	if commit.IsZero() {
		return nil, nil
	}
	c, err := s.git.CommitObject(commit)
	if err != nil {
		return nil, err
	}
	return c.Tree()
}

// commitSubject is the subject Porch gives the commit of task (none:
// an intermediate commit).
func commitSubject(task []byte, body []string) (string, error) {
	typ := porch.TaskTypeNone
	if len(task) > 0 {
		t, err := porch.ParseTask(task)
		if err != nil {
			return "", err
		}
		typ = t.Type
	}
	subject := porch.CommitSubject(typ)
	for _, b := range body {
		if b = strings.TrimSpace(b); b != "" {
			subject += "\n\n" + b
		}
	}
	return subject, nil
}
