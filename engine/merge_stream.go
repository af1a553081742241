package engine

import (
	"errors"
	"fmt"
	"hash/maphash"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/engine/internal/mergewalk"
	kerrors "sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// mergeSide is one tree of a merge (origin, updated or local) and its
// files, in the reader's order.
type mergeSide struct {
	dir, source string
	reader      kio.LocalPackageReader
	root        string
	index       map[string]int // file (relative) -> position in the reader's order
}

func newMergeSide(dir, source string, mem memTrees) (*mergeSide, error) {
	s := &mergeSide{dir: dir, source: source, reader: mergeReader(dir, source, mem.fs(dir)), index: map[string]int{}}
	if !exists(dir) {
		return s, nil
	}
	root, rels, err := listPackageFiles(s.reader)
	if errors.Is(err, errNotADir) {
		err = fmt.Errorf("%s is not a directory", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("reading resources in %s: %w", dir, err)
	}
	s.root = root
	for i, rel := range rels {
		s.index[rel] = i
	}
	return s, nil
}

// read reads and parses one file of the side (nil when it has none): as
// copies of prev's resources when the bytes are equal.
func (s *mergeSide) read(rel string, prev *packageFile) (*packageFile, error) {
	if _, ok := s.index[rel]; !ok {
		return nil, nil
	}
	full := filepath.Join(s.root, rel)
	content, err := s.reader.FileSystem.ReadFile(full)
	if err != nil {
		return nil, fmt.Errorf("reading resources in %s: %w", s.dir, kerrors.WrapPrefixf(err, "%s", full))
	}
	f := &packageFile{rel: rel, content: content}
	err = readMergeFile(f, s.source, prev, func() ([]*yaml.RNode, error) {
		nodes, err := parseFile(s.reader, rel, content)
		if err != nil {
			err = kerrors.WrapPrefixf(err, "%s", full)
		}
		return nodes, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading resources in %s: %w", s.dir, err)
	}
	return f, nil
}

// mergeResources is kpt's resource merge of one package, a file at a
// time. kpt's merge key holds the file path, so a resource only ever
// meets its counterparts in the same file of the other two trees: a
// file's three versions are all its merge needs. Files go through on all
// CPUs, each read, merged and written before the next, so the package is
// never held as parsed trees (kpt holds all three trees, ~45x the
// package each). Errors are reported as the whole-package merge reports
// them: the first in kpt's reading order (every origin file, then
// upstream's, then the local package's).
func mergeResources(localPath, updatedPath, originPath string, mem memTrees) ([]Conflict, error) {
	var sides [3]*mergeSide
	for i, d := range [3][2]string{{originPath, "original"}, {updatedPath, "updated"}, {localPath, "dest"}} {
		s, err := newMergeSide(d[0], d[1], mem)
		if err != nil {
			return nil, err
		}
		sides[i] = s
	}
	seen := map[string]bool{}
	var files []string
	for _, s := range sides {
		for rel := range s.index {
			if !seen[rel] {
				seen[rel] = true
				files = append(files, rel)
			}
		}
	}
	sort.Strings(files)
	type outcome struct {
		conflicts []Conflict
		err       error
		at        [2]int // side, position: where the error was met
	}
	outs := make([]outcome, len(files))
	seed := maphash.MakeSeed()
	schemas := &mergewalk.SchemaCache{}
	forEachParallel(len(files), func(i int) {
		o := &outs[i]
		o.conflicts, o.at, o.err = mergeFile(files[i], sides, localPath, seed, schemas)
	})
	var first *outcome
	var conflicts []Conflict
	for i := range outs {
		o := &outs[i]
		if o.err != nil && (first == nil || o.at[0] < first.at[0] || (o.at[0] == first.at[0] && o.at[1] < first.at[1])) {
			first = o
		}
		conflicts = append(conflicts, o.conflicts...)
	}
	if first != nil {
		return nil, first.err
	}
	sortConflicts(conflicts)
	return conflicts, nil
}

// mergeFile merges the three versions of one file and writes the result
// into the local package. at says where an error was met (side and the
// file's position in that side's reading order).
func mergeFile(rel string, sides [3]*mergeSide, localPath string, seed maphash.Seed, schemas *mergewalk.SchemaCache) (conflicts []Conflict, at [2]int, err error) {
	var tuples []*mergeTuple
	index := map[string]*mergeTuple{}
	var origin *packageFile
	for si, s := range sides {
		f, err := s.read(rel, origin)
		if err != nil {
			return nil, [2]int{si, s.index[rel]}, err
		}
		if f == nil {
			continue
		}
		if si == 0 {
			origin = f
		}
		for _, n := range f.nodes {
			key, err := mergeKey(n)
			if err != nil {
				return nil, [2]int{si, s.index[rel]}, fmt.Errorf("%s: %w", s.dir, err)
			}
			t, ok := index[key]
			if !ok {
				t = &mergeTuple{}
				index[key] = t
				tuples = append(tuples, t)
			}
			slot := [3]**yaml.RNode{&t.original, &t.updated, &t.dest}[si]
			if *slot != nil {
				path := n.GetAnnotations()[kioutil.PathAnnotation]
				return nil, [2]int{si, s.index[rel]}, fmt.Errorf(`found duplicate %q resources in file %q, please refer to "update" documentation for the fix`, s.source, path)
			}
			*slot = n
		}
	}
	conflicts, err = mergeFileTuples(tuples, localPath, seed, schemas)
	return conflicts, [2]int{2, sides[2].index[rel]}, err
}

// mergeFileTuples merges one file's matched resources as kpt's
// ResourceMergeUpdater does and writes the file (or deletes it when it
// held local resources and holds none now; leaves it alone when what its
// resources mean did not change).
func mergeFileTuples(tuples []*mergeTuple, localPath string, seed maphash.Seed, schemas *mergewalk.SchemaCache) ([]Conflict, error) {
	localFiles := map[string]bool{}
	var dest []*yaml.RNode
	for _, t := range tuples {
		if t.dest != nil {
			localFiles[filePath(t.dest)] = true
			dest = append(dest, t.dest)
		}
	}
	before := map[string][]uint64{}
	sort.SliceStable(dest, func(i, j int) bool { return indexOf(dest[i]) < indexOf(dest[j]) })
	for _, n := range dest {
		before[filePath(n)] = append(before[filePath(n)], fingerprint(seed, n.YNode()))
	}
	// Conflicts need the local version as it was before the merge; the
	// walker may reuse its nodes.
	bothChanged := map[int]*yaml.RNode{}
	for i, t := range tuples {
		if t.original == nil || t.updated == nil || t.dest == nil {
			continue
		}
		o := fingerprint(seed, t.original.YNode())
		if o != fingerprint(seed, t.dest.YNode()) && o != fingerprint(seed, t.updated.YNode()) {
			bothChanged[i] = t.dest.Copy()
		}
	}
	merged, err := mergeTuples(tuples, seed, schemas)
	if err != nil {
		return nil, err
	}
	var conflicts []Conflict
	for i, local := range bothChanged {
		if merged[i] == nil {
			continue
		}
		t := tuples[i]
		key, _ := mergeKey(t.original)
		parts := strings.Split(key, "\x00")
		id := parts[0] + "/" + parts[1] + "/" + parts[2] + "/" + parts[3]
		conflicts = append(conflicts, tupleConflicts(filepath.ToSlash(parts[4]), id, t.original, local, t.updated, merged[i])...)
	}
	var out []*yaml.RNode
	for i, t := range tuples {
		switch {
		case t.original == nil && t.updated == nil && t.dest != nil:
			out = append(out, t.dest)
		case t.original == nil && t.updated != nil && t.dest == nil:
			out = append(out, t.updated)
		case t.updated == nil && t.dest == nil:
		case t.original != nil && t.updated == nil:
			if !sameResource(t.original, t.dest) {
				out = append(out, t.dest)
			}
		case t.original != nil && t.dest == nil:
		default:
			if merged[i] != nil {
				out = append(out, merged[i])
			}
		}
	}
	return conflicts, writeMerged(localPath, localFiles, unchangedFiles(seed, before, out), out)
}
