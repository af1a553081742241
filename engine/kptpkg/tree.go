package kptpkg

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Tree is a package's files keyed by slash-separated path relative to the
// package root.
type Tree map[string][]byte

// ReadTree reads every regular file under dir, skipping VCS metadata.
func ReadTree(dir string) (Tree, error) {
	t := Tree{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && (d.Name() == ".git" || d.Name() == ".hg" || d.Name() == ".svn") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		t[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading package directory %s: %w", dir, err)
	}
	return t, nil
}

// Write writes every file of t under dir.
func (t Tree) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range t.Paths() {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, t[name], 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return nil
}

// Paths returns the file paths in sorted order.
func (t Tree) Paths() []string {
	out := make([]string, 0, len(t))
	for p := range t {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Sub returns the files under dir (slash-separated, "." for all), re-rooted.
func (t Tree) Sub(dir string) Tree {
	if dir == "." || dir == "" {
		return t
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	out := Tree{}
	for p, b := range t {
		if strings.HasPrefix(p, prefix) {
			out[strings.TrimPrefix(p, prefix)] = b
		}
	}
	return out
}

// Changes lists the paths added, removed and modified going from t to u.
func (t Tree) Changes(u Tree) (added, removed, modified []string) {
	for _, p := range u.Paths() {
		old, ok := t[p]
		switch {
		case !ok:
			added = append(added, p)
		case !bytes.Equal(old, u[p]):
			modified = append(modified, p)
		}
	}
	for _, p := range t.Paths() {
		if _, ok := u[p]; !ok {
			removed = append(removed, p)
		}
	}
	return added, removed, modified
}

// SyncDir makes dir hold exactly want, given that it currently holds have
// (as read by ReadTree). Each file is replaced by rename, so a reader never
// sees a half-written file; empty directories left behind are removed.
// Files are written in parallel: creating a file is mostly the kernel
// allocating its inode, which a second core halves for a small package.
func SyncDir(dir string, have, want Tree) error {
	added, removed, modified := have.Changes(want)
	writes := append(added, modified...)
	errs := make([]error, len(writes))
	ForEachParallel(len(writes), func(i int) {
		errs[i] = replaceFile(filepath.Join(dir, filepath.FromSlash(writes[i])), want[writes[i]])
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for _, p := range removed {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("removing %s: %w", dst, err)
		}
		for d := filepath.Dir(dst); d != dir && strings.HasPrefix(d, dir); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				break // not empty
			}
		}
	}
	return nil
}

// MemFS loads t into a new in-memory file system under root, where kpt's
// renderer and kyaml's package readers work without touching the disk.
func (t Tree) MemFS(root string) (filesys.FileSystem, error) {
	fsys := filesys.MakeFsInMemory()
	for _, p := range t.Paths() {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := fsys.MkdirAll(filepath.Dir(full)); err != nil {
			return nil, err
		}
		if err := fsys.WriteFile(full, t[p]); err != nil {
			return nil, err
		}
	}
	return fsys, nil
}

// ReadFS reads the files under root of fsys back into a Tree.
func ReadFS(fsys filesys.FileSystem, root string) (Tree, error) {
	out := Tree{}
	err := fsys.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := fsys.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	return out, err
}

// Equal reports whether t and u hold the same files with the same bytes.
func (t Tree) Equal(u Tree) bool {
	if len(t) != len(u) {
		return false
	}
	for p, x := range t {
		if y, ok := u[p]; !ok || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}

// replaceFile writes b to dst through a temporary file renamed over it,
// keeping dst's permissions (0644 for a new file).
func replaceFile(dst string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".kptbot-*")
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(dst); err == nil {
		mode = fi.Mode().Perm()
	}
	_ = tmp.Chmod(mode)
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("replacing %s: %w", dst, err)
	}
	return nil
}
