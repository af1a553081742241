package engine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kptdev/kpt/pkg/kptfile/kptfileutil"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// The file walks of the update strategies (update_replace.go), as kpt's
// pkgutil does them: subpackages found, packages copied and emptied, stale
// files removed.

// subpackageMatch selects subpackages as kpt's pkg.SubpackageMatcher.
type subpackageMatch int

const (
	matchNone  subpackageMatch = iota
	matchLocal                 // a Kptfile without upstream
	matchAll
)

// subpackagesOf lists, relative to each root and merged, the subpackages
// at any depth under the roots that match (kpt's FindSubpackagesForPaths
// with recursion: the walk goes on below every subpackage, remote ones
// included), sorted root first.
func subpackagesOf(m subpackageMatch, roots ...string) ([]string, error) {
	seen := map[string]bool{}
	for _, root := range roots {
		subs, err := subpackagesUnder(root, m, true)
		if err != nil {
			return nil, err
		}
		for _, s := range subs {
			seen[s] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	// kpt sorts by filepath.SplitList segments, which are always one:
	// plain lexical order.
	sort.Strings(out)
	return out, nil
}

// subpackagesUnder is kpt's pkg.Subpackages.
func subpackagesUnder(root string, m subpackageMatch, recursive bool) ([]string, error) {
	if m == matchNone || !exists(root) {
		return nil, nil
	}
	var out []string
	err := filepath.Walk(root, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return fmt.Errorf("failed to read package %s: %w", root, err)
		}
		if p == root || !info.IsDir() {
			return nil
		}
		if info.Name() == ".git" {
			return filepath.SkipDir
		}
		if !exists(filepath.Join(p, kptpkg.KptfileName)) {
			return nil
		}
		kf, err := kptfileutil.ReadKptfile(filesys.FileSystemOrOnDisk{}, p)
		if err != nil {
			return fmt.Errorf("reading %s: %w", filepath.Join(p, kptpkg.KptfileName), err)
		}
		if m == matchAll || kf.Upstream == nil {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, rel)
		}
		if !recursive {
			return filepath.SkipDir
		}
		return nil
	})
	return out, err
}

// walkPackage walks src without its .git directories and without its
// subpackages (kpt's pkgutil.WalkPackage). As in kpt, a subpackage is
// excluded by path prefix, so a sibling directory whose name extends a
// subpackage's (sub2 after sub) is excluded with it.
func walkPackage(src string, visit func(p string, info fs.FileInfo) error) error {
	var excluded []string
	return filepath.Walk(src, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p != src && isDotGitPath(strings.TrimPrefix(p, src)) {
			return nil
		}
		for _, dir := range excluded {
			if strings.HasPrefix(p, dir) {
				return nil
			}
		}
		if info.IsDir() && p != src {
			if _, err := os.Stat(filepath.Join(p, kptpkg.KptfileName)); err == nil {
				excluded = append(excluded, p)
				return nil
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return visit(p, info)
	})
}

// isDotGitPath reports whether a path has a .git segment.
func isDotGitPath(p string) bool {
	for _, c := range strings.Split(filepath.ToSlash(filepath.Clean(p)), "/") {
		if c == ".git" {
			return true
		}
	}
	return false
}

// copyPackage copies src's files into dst (kpt's pkgutil.CopyPackage):
// the package's own files (its Kptfile only when copyRootKptfile, and
// never over an existing one), then whole the subpackages m selects.
func copyPackage(src, dst string, copyRootKptfile bool, m subpackageMatch) error {
	subs, err := subpackagesUnder(src, m, true)
	if err != nil {
		return err
	}
	err = walkPackage(src, func(p string, info fs.FileInfo) error {
		rel := strings.TrimPrefix(p, src)
		if rel == "/"+kptpkg.KptfileName && exists(filepath.Join(dst, rel)) {
			return nil
		}
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), info.Mode())
		}
		if p == filepath.Join(src, kptpkg.KptfileName) && !copyRootKptfile {
			return nil
		}
		return copyFile(filepath.Join(src, rel), filepath.Join(dst, rel), info.Mode())
	})
	if err != nil {
		return err
	}
	for _, sub := range subs {
		subSrc := filepath.Join(src, sub)
		err := filepath.Walk(subSrc, func(p string, info fs.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if isDotGitPath(strings.TrimPrefix(p, subSrc)) {
				return nil
			}
			rel := strings.TrimPrefix(p, src)
			if info.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), info.Mode())
			}
			// kpt compares against the root's Kptfile here, which a
			// subpackage's path never is
			if rel == "/"+kptpkg.KptfileName && exists(filepath.Join(dst, rel)) {
				return nil
			}
			return copyFile(filepath.Join(src, rel), filepath.Join(dst, rel), info.Mode())
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string, mode fs.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, mode)
}

// removeStale deletes from dst what the origin had and the update no
// longer has (kpt's pkgutil.RemoveStaleItems), the root Kptfile aside.
func removeStale(origin, updated, dst string) error {
	var dirs []string
	err := filepath.Walk(dst, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p == dst {
			return nil
		}
		rel, err := filepath.Rel(dst, p)
		if err != nil {
			return err
		}
		if rel == kptpkg.KptfileName {
			return nil
		}
		_, uerr := os.Stat(filepath.Join(updated, rel))
		_, oerr := os.Stat(filepath.Join(origin, rel))
		if errors.Is(uerr, fs.ErrNotExist) && oerr == nil {
			if info.IsDir() {
				dirs = append(dirs, p)
				return nil
			}
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if err := os.Remove(d); err != nil {
			return err
		}
	}
	return nil
}

// removePackageContent deletes the package's own files (its Kptfile only
// when removeRootKptfile), then its directories left empty, deepest first
// (kpt's pkgutil.RemovePackageContent).
func removePackageContent(root string, removeRootKptfile bool) error {
	var dirs []string
	err := walkPackage(root, func(p string, info fs.FileInfo) error {
		if info.IsDir() {
			if p != root {
				dirs = append(dirs, p)
			}
			return nil
		}
		if p == filepath.Join(root, kptpkg.KptfileName) && !removeRootKptfile {
			return nil
		}
		return os.Remove(p)
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		empty, err := isEmptyDir(d)
		if err != nil {
			return err
		}
		if empty {
			if err := os.RemoveAll(d); err != nil {
				return err
			}
		}
	}
	return nil
}

func isEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
