package gitrepo

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/kptbot/kptbot/forge"
)

// writeBlob stores content and returns its hash.
func writeBlob(s storer.EncodedObjectStorer, content []byte) (plumbing.Hash, error) {
	o := s.NewEncodedObject()
	o.SetType(plumbing.BlobObject)
	w, err := o.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		w.Close()
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(o)
}

// writeTree stores a tree with git's entry order (directories sort as if
// their name ended in "/").
func writeTree(s storer.EncodedObjectStorer, entries []object.TreeEntry) (plumbing.Hash, error) {
	sort.Slice(entries, func(i, j int) bool {
		return sortName(entries[i]) < sortName(entries[j])
	})
	t := &object.Tree{Entries: entries}
	o := s.NewEncodedObject()
	if err := t.Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(o)
}

func sortName(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// treeFromFiles builds a tree (with subtrees) from slash-separated paths.
func treeFromFiles(s storer.EncodedObjectStorer, files map[string][]byte) (plumbing.Hash, error) {
	blobs := map[string][]byte{}
	subdirs := map[string]map[string][]byte{}
	for p, b := range files {
		if i := strings.Index(p, "/"); i >= 0 {
			d := p[:i]
			if subdirs[d] == nil {
				subdirs[d] = map[string][]byte{}
			}
			subdirs[d][p[i+1:]] = b
			continue
		}
		blobs[p] = b
	}
	var entries []object.TreeEntry
	for name, b := range blobs {
		h, err := writeBlob(s, b)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	for name, sub := range subdirs {
		h, err := treeFromFiles(s, sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	return writeTree(s, entries)
}

// ReplaceDir returns a tree equal to base except that directory dir holds
// exactly files (or is gone, when files is nil); parent directories are
// created or pruned as needed.
func ReplaceDir(s storer.EncodedObjectStorer, base *object.Tree, dir string, files map[string][]byte) (plumbing.Hash, error) {
	dir = strings.Trim(path.Clean("/"+dir), "/")
	if dir == "" {
		return plumbing.ZeroHash, fmt.Errorf("replacing the repository root is not supported: packages live in directories")
	}
	first, rest, _ := strings.Cut(dir, "/")
	var entries []object.TreeEntry
	var existing *object.TreeEntry
	if base != nil {
		for i := range base.Entries {
			e := base.Entries[i]
			if e.Name == first {
				existing = &e
				continue
			}
			entries = append(entries, e)
		}
	}
	var child plumbing.Hash
	var err error
	if rest == "" {
		if files != nil {
			child, err = treeFromFiles(s, files)
		}
	} else {
		var sub *object.Tree
		if existing != nil && existing.Mode == filemode.Dir {
			if sub, err = object.GetTree(s, existing.Hash); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		child, err = ReplaceDir(s, sub, rest, files)
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !child.IsZero() {
		if t, err := object.GetTree(s, child); err == nil && len(t.Entries) > 0 {
			entries = append(entries, object.TreeEntry{Name: first, Mode: filemode.Dir, Hash: child})
		}
	}
	return writeTree(s, entries)
}

// readFiles reads every file under tree, within lim: the count and each
// blob's size are checked before its content is read, so a tree over the
// cap costs no more memory than the cap.
func readFiles(tree *object.Tree, lim forge.TreeLimits) (map[string][]byte, error) {
	files := map[string][]byte{}
	var total int64
	err := tree.Files().ForEach(func(f *object.File) error {
		total += f.Size
		if err := lim.Check(len(files)+1, total); err != nil {
			return err
		}
		rd, err := f.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		b, err := io.ReadAll(io.LimitReader(rd, f.Size+1))
		files[f.Name] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}
