package gitstore

// Ref writes into a local repository with git's own locking protocol, so
// a git process writing the same ref at the same time (a person pushing
// into the repository over ssh, say) and kptbot exclude each other: go-git
// writes refs in place under an flock that git does not take, and would
// overwrite a tag created between its check and its write.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// writeLocalRef moves name from old (nil: it must not exist, so a tag is
// only ever created) to h, holding git's <ref>.lock: the lock file is
// created exclusively, the ref's value is checked under it, and the new
// value is renamed into place, as git update-ref does.
func (s *Store) writeLocalRef(name string, old *plumbing.Reference, h plumbing.Hash) error {
	path := filepath.Join(filepath.Dir(s.lock), filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	lock := path + ".lock"
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%w: %s is being written by another git process (%s exists)", ErrConflict, name, lock)
	}
	if err != nil {
		return fmt.Errorf("locking %s: %w", name, err)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(lock)
		}
	}()
	cur, err := s.ref(name)
	if err != nil {
		return err
	}
	switch {
	case old == nil && cur != nil:
		return fmt.Errorf("%w: %s already exists (at %s)", ErrConflict, name, cur.Hash())
	case old != nil && (cur == nil || cur.Hash() != old.Hash()):
		return fmt.Errorf("%w: %s moved from %s", ErrConflict, name, old.Hash())
	}
	if _, err := f.WriteString(h.String() + "\n"); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	done = true
	if err := os.Rename(lock, path); err != nil {
		os.Remove(lock)
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
