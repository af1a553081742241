package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
)

// ErrDirty reports uncommitted changes in a package that must be clean.
var ErrDirty = errors.New("package has uncommitted changes")

// CheckClean verifies before an update that dir is inside a git work tree
// and has no uncommitted changes, so the update can be reviewed and
// reverted with git. kpt (through v1.0.0-beta.67) defines these errors but
// does not check; kptbot does, since the merge rewrites files in place.
func CheckClean(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	repo, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return fmt.Errorf("package %s is not in a git repository: kptbot updates only packages committed to git, so the update can be reviewed and reverted (use --allow-dirty to skip this check)", dir)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return fmt.Errorf("package %s: %w", dir, err)
	}
	root := wt.Filesystem.Root()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if a, err := filepath.EvalSymlinks(abs); err == nil {
		abs = a
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return err
	}
	rel = filepath.ToSlash(rel)
	st, err := wt.Status()
	if err != nil {
		return fmt.Errorf("reading git status of %s: %w", dir, err)
	}
	var dirty []string
	for p, s := range st {
		if rel != "." && p != rel && !strings.HasPrefix(p, rel+"/") {
			continue
		}
		if s.Worktree == git.Unmodified && s.Staging == git.Unmodified {
			continue
		}
		dirty = append(dirty, p)
	}
	if len(dirty) > 0 {
		sort.Strings(dirty)
		if len(dirty) > 5 {
			dirty = append(dirty[:5], fmt.Sprintf("and %d more", len(dirty)-5))
		}
		return fmt.Errorf("%w in %s: %s; commit or stash them first (or use --allow-dirty)", ErrDirty, dir, strings.Join(dirty, ", "))
	}
	return nil
}
