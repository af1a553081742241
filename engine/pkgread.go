package engine

import (
	"bytes"
	"path/filepath"
	goruntime "runtime"
	"sync"

	kerrors "sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readPackage returns what r.Read() returns, parsing the files on all
// CPUs: parsing is most of a read, and kio parses one file after the other.
// kio's own walk chooses the files (.krmignore, subpackages, globs, order);
// each file is then parsed by a kio.ByteReader configured as kio's reader
// configures it. kio shares one annotation map across files, but every
// key it carries from one document to the next (path, index, sequence
// indent: always derived) is overwritten for each document, so per-file
// maps give the same annotations.
func readPackage(r kio.LocalPackageReader) ([]*yaml.RNode, error) {
	if r.PackagePath == "" {
		return r.Read() // kio's error
	}
	globs := r.MatchFilesGlob
	if len(globs) == 0 {
		globs = kio.DefaultMatch
	}
	dir, file, err := r.FileSystem.CleanedAbs(filepath.ToSlash(r.PackagePath))
	if err != nil {
		return r.Read()
	}
	root := filepath.Join(string(dir), file)
	if !r.FileSystem.IsDir(root) {
		return r.Read() // a single file (or none): nothing to spread
	}
	var rels []string
	skip := r.FileSkipFunc
	lister := r
	lister.SetAnnotations = nil
	lister.FileSkipFunc = func(rel string) bool {
		if skip != nil && skip(rel) {
			return true
		}
		for _, g := range globs {
			if ok, _ := filepath.Match(g, filepath.Base(rel)); ok {
				rels = append(rels, rel)
				break
			}
		}
		return true
	}
	if _, err := lister.Read(); err != nil {
		return nil, err
	}
	contents := make([][]byte, len(rels))
	for i, rel := range rels {
		if contents[i], err = r.FileSystem.ReadFile(filepath.Join(root, rel)); err != nil {
			return nil, kerrors.WrapPrefixf(err, "%s", filepath.Join(root, rel))
		}
	}
	nodes := make([][]*yaml.RNode, len(rels))
	errs := make([]error, len(rels))
	parse := func(i int) {
		set := make(map[string]string, len(r.SetAnnotations)+6)
		for k, v := range r.SetAnnotations {
			set[k] = v
		}
		if !r.OmitReaderAnnotations {
			set[kioutil.PathAnnotation] = rels[i]
			set[kioutil.LegacyPathAnnotation] = rels[i] //nolint:staticcheck // kio sets both
		}
		br := &kio.ByteReader{
			DisableUnwrapping:     true,
			Reader:                bytes.NewReader(contents[i]),
			OmitReaderAnnotations: r.OmitReaderAnnotations,
			SetAnnotations:        set,
			PreserveSeqIndent:     r.PreserveSeqIndent,
			WrapBareSeqNode:       r.WrapBareSeqNode,
		}
		nodes[i], errs[i] = br.Read()
		if errs[i] != nil {
			errs[i] = kerrors.WrapPrefixf(errs[i], "%s", filepath.Join(root, rels[i]))
		}
	}
	forEachParallel(len(rels), parse)
	var out []*yaml.RNode
	for i := range rels {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out = append(out, nodes[i]...)
	}
	return out, nil
}

// forEachParallel calls f(0..n-1) on GOMAXPROCS goroutines.
func forEachParallel(n int, f func(i int)) {
	workers := goruntime.GOMAXPROCS(0)
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
