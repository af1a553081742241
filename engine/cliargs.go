package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/locator"
)

// kpt's rules for the local package arguments of `pkg get` and `pkg
// update`, and how it names what it fetched: the CLI parses flags, these
// say what the arguments mean.

// Destination is where `pkg get` puts the package ref names when asked for
// dest: an existing directory receives a new subdirectory named after the
// package; otherwise the path itself is used (made absolute).
func Destination(dest string, ref fetch.Ref) (string, error) {
	dest, err := filepath.Abs(dest)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(dest)
	if err != nil {
		if os.IsNotExist(err) {
			return dest, nil
		}
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("destination %s exists and is not a directory", dest)
	}
	base := filepath.Base(ref.Dir)
	switch {
	case locator.Store(ref.Repo) != locator.Git:
		base = locator.DefaultName(locator.Ref(ref))
	case ref.Dir == "/":
		base = filepath.Base(strings.TrimSuffix(strings.TrimSuffix(ref.Repo, "/"), ".git"))
	}
	return filepath.Join(dest, base), nil
}

// SplitPackageArg splits a local PKG_PATH[@VERSION] argument; the path
// defaults to ".".
func SplitPackageArg(arg string) (dir, version string) {
	dir = arg
	if i := strings.LastIndex(dir, "@"); i >= 0 {
		dir, version = dir[:i], dir[i+1:]
	}
	if dir == "" {
		dir = "."
	}
	return dir, version
}

// PackageName names a package of an update as kpt does: the root by its
// directory's name (never "."), a subpackage by its path below the root's
// parent directory ("team-a/db").
func PackageName(root, sub string) string {
	name := filepath.Base(root)
	if abs, err := filepath.Abs(root); err == nil {
		name = filepath.Base(abs)
	}
	if sub == "" || sub == "." {
		return name
	}
	return name + "/" + filepath.ToSlash(sub)
}

// Describe says where a fetched package came from and what it resolved to.
func (p FetchedPackage) Describe() string {
	switch {
	case p.Resolved.Ref == "" || p.Resolved.Ref == p.Resolved.Commit:
		return fmt.Sprintf("%s at %s", p.Source(), p.Resolved.Commit)
	default:
		return fmt.Sprintf("%s at %s (%s)", p.Source(), p.Resolved.Ref, p.Resolved.Commit)
	}
}
