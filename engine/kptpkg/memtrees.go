package kptpkg

import (
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// MemTrees maps the working directories of an update's upstream trees
// (origin, updated) to in-memory copies of their full content, for the
// trees whose YAML files were not written to disk. A nil memTrees holds
// nothing.
type MemTrees map[string]filesys.FileSystem

// Write puts fetched tree t at dir for a merge. With inMemory, a tree
// without subpackages keeps its YAML files (the package's resources) in
// memory only: the only code that reads them is the merge's resource
// reader, which reads them from m, and creating, reading and deleting
// them on disk was most of an update's system time. Everything else
// (Kptfiles, JSON and other files, every directory) is written, so code
// that looks at the directory (Kptfile merge, non-KRM file sync,
// subpackage discovery) sees what it saw before. Trees with subpackages
// are written whole: kpt's rules for added and deleted subpackages copy
// and compare them on disk.
func (m MemTrees) Write(t Tree, dir string, inMemory bool) error {
	if !inMemory || m == nil || hasSubpackage(t) {
		return t.Write(dir)
	}
	disk := Tree{}
	for p, c := range t {
		if !IsYAMLFile(p) {
			disk[p] = c
		}
	}
	if err := disk.Write(dir); err != nil {
		return err
	}
	for p := range t {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(filepath.FromSlash(p))), 0o755); err != nil {
			return err
		}
	}
	fsys, err := t.MemFS(dir)
	if err != nil {
		return err
	}
	m[dir] = fsys
	return nil
}

// FS returns the in-memory copy holding dir, or nil when dir is on disk.
func (m MemTrees) FS(dir string) filesys.FileSystem {
	for root, fsys := range m {
		if dir == root || strings.HasPrefix(dir, root+string(filepath.Separator)) {
			return fsys
		}
	}
	return nil
}

// IsYAMLFile reports the files nonKRMFiles leaves to the resource merge:
// .yaml and .yml files other than Kptfiles.
func IsYAMLFile(p string) bool {
	base := filepath.Base(filepath.FromSlash(p))
	return base != KptfileName && (strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml"))
}

// hasSubpackage reports whether t holds a Kptfile below its root.
func hasSubpackage(t Tree) bool {
	for p := range t {
		if p != KptfileName && filepath.Base(filepath.FromSlash(p)) == KptfileName {
			return true
		}
	}
	return false
}
