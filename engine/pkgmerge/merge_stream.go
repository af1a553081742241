package pkgmerge

import (
	"errors"
	"fmt"
	"hash/maphash"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/engine/internal/mergewalk"
	"github.com/kptbot/kptbot/engine/kptpkg"
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

func newMergeSide(dir, source string, mem kptpkg.MemTrees) (*mergeSide, error) {
	s := &mergeSide{dir: dir, source: source, reader: mergeReader(dir, source, mem.FS(dir)), index: map[string]int{}}
	if !exists(dir) {
		return s, nil
	}
	root, rels, err := kptpkg.ListPackageFiles(s.reader)
	if errors.Is(err, kptpkg.ErrNotADir) {
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
func (s *mergeSide) read(rel string, prev *kptpkg.PackageFile) (*kptpkg.PackageFile, error) {
	if _, ok := s.index[rel]; !ok {
		return nil, nil
	}
	f, err := kptpkg.ReadListed(s.reader, s.root, rel)
	if err == nil {
		err = readMergeFile(&f, s.source, prev, func() ([]*yaml.RNode, error) { return kptpkg.ParseListed(s.reader, s.root, f) })
	}
	if err != nil {
		return nil, fmt.Errorf("reading resources in %s: %w", s.dir, err)
	}
	return &f, nil
}

// mergeResources is kpt's resource merge of one package, a file at a
// time. kpt's merge key holds the file path, so a resource only ever
// meets its counterparts in the same file of the other two trees: a
// file's three versions are all its merge needs. Files go through on all
// CPUs, each read, merged and written before the next, so the package is
// never held as parsed trees (kpt holds all three trees, ~45x the
// package each). Errors are reported as the whole-package merge reports
// them: the first in kpt's order (every file of the three trees read,
// then their resources matched, then the merges, then the writes).
func mergeResources(localPath, updatedPath, originPath string, mem kptpkg.MemTrees) ([]Conflict, error) {
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
		at        errorAt
	}
	outs := make([]outcome, len(files))
	seed := maphash.MakeSeed()
	schemas := &mergewalk.SchemaCache{}
	kptpkg.ForEachParallel(len(files), func(i int) {
		o := &outs[i]
		o.conflicts, o.at, o.err = mergeFile(files[i], i, sides, localPath, seed, schemas)
	})
	var first *outcome
	var conflicts []Conflict
	for i := range outs {
		o := &outs[i]
		if o.err != nil && (first == nil || o.at.before(first.at)) {
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

// errorAt places an error in the whole-package merge's order: the stage
// (0 reading and parsing the trees, 1 matching their resources, 2
// merging, 3 writing), the tree's rank in kptReadingOrder, and the file's
// position in that tree.
type errorAt struct{ stage, step, file int }

func (a errorAt) before(b errorAt) bool {
	if a.stage != b.stage {
		return a.stage < b.stage
	}
	if a.step != b.step {
		return a.step < b.step
	}
	return a.file < b.file
}

// mergeFile merges the three versions of one file (the nth of the merge,
// in name order) and writes the result into the local package. at says
// where an error was met.
func mergeFile(rel string, n int, sides [3]*mergeSide, localPath string, seed maphash.Seed, schemas *mergewalk.SchemaCache) (conflicts []Conflict, at errorAt, err error) {
	// Read every side first (the origin first: the others copy its
	// resources when their bytes are equal), then match, each reporting
	// its first error in kpt's order.
	var files [3]*kptpkg.PackageFile
	var errs [3]error
	for si, s := range sides {
		files[si], errs[si] = s.read(rel, files[0])
	}
	for rank, si := range kptReadingOrder {
		if errs[si] != nil {
			return nil, errorAt{0, rank, sides[si].index[rel]}, errs[si]
		}
	}
	var tuples []*mergeTuple
	index := map[string]*mergeTuple{}
	for si, s := range sides {
		if files[si] == nil {
			continue
		}
		for _, n := range files[si].Nodes {
			key, err := mergeKey(n)
			if err != nil {
				errs[si] = fmt.Errorf("%s: %w", s.dir, err)
				break
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
				errs[si] = fmt.Errorf(`found duplicate %q resources in file %q, please refer to "update" documentation for the fix`, s.source, path)
				break
			}
			*slot = n
		}
	}
	for rank, si := range kptReadingOrder {
		if errs[si] != nil {
			return nil, errorAt{1, rank, sides[si].index[rel]}, errs[si]
		}
	}
	conflicts, writing, err := mergeFileTuples(tuples, localPath, seed, schemas)
	if writing {
		return conflicts, errorAt{3, 0, n}, err
	}
	// a merge needs the origin's version: order merges by the origin's files
	return conflicts, errorAt{2, 0, sides[0].index[rel]}, err
}

// kptReadingOrder is the order kpt's merge reads the three trees (sides:
// origin 0, updated 1, local 2) in, all of them before it matches their
// resources in the same order.
var kptReadingOrder = [3]int{0, 1, 2}

// mergeFileTuples merges one file's matched resources as kpt's
// ResourceMergeUpdater does and writes the file (or deletes it when it
// held local resources and holds none now; leaves it alone when what its
// resources mean did not change). writing says an error came from writing.
func mergeFileTuples(tuples []*mergeTuple, localPath string, seed maphash.Seed, schemas *mergewalk.SchemaCache) (_ []Conflict, writing bool, _ error) {
	localFiles := map[string]bool{}
	var dest []*yaml.RNode
	for _, t := range tuples {
		if t.dest != nil {
			localFiles[kptpkg.FilePath(t.dest)] = true
			dest = append(dest, t.dest)
		}
	}
	before := map[string][]uint64{}
	sort.SliceStable(dest, func(i, j int) bool { return kptpkg.IndexOf(dest[i]) < kptpkg.IndexOf(dest[j]) })
	for _, n := range dest {
		before[kptpkg.FilePath(n)] = append(before[kptpkg.FilePath(n)], kptpkg.Fingerprint(seed, n.YNode()))
	}
	// Conflicts need the local version as it was before the merge; the
	// walker may reuse its nodes.
	bothChanged := map[int]*yaml.RNode{}
	for i, t := range tuples {
		if t.original == nil || t.updated == nil || t.dest == nil {
			continue
		}
		o := kptpkg.Fingerprint(seed, t.original.YNode())
		if o != kptpkg.Fingerprint(seed, t.dest.YNode()) && o != kptpkg.Fingerprint(seed, t.updated.YNode()) {
			bothChanged[i] = t.dest.Copy()
		}
	}
	merged, err := mergeTuples(tuples, seed, schemas)
	if err != nil {
		return nil, false, err
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
	return conflicts, true, writeMerged(localPath, localFiles, unchangedFiles(seed, before, out), out)
}
