package kptpkg

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	kerrors "sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ReadPackage returns what r.Read() returns, parsing the files on all
// CPUs: parsing is most of a read, and kio parses one file after the other.
// kio's own walk chooses the files (.krmignore, subpackages, globs, order);
// each file is then parsed by a kio.ByteReader configured as kio's reader
// configures it. kio shares one annotation map across files, but every
// key it carries from one document to the next (path, index, sequence
// indent: always derived) is overwritten for each document, so per-file
// maps give the same annotations.
func ReadPackage(r kio.LocalPackageReader) ([]*yaml.RNode, error) {
	files, err := ReadPackageFiles(r, nil)
	if err != nil {
		return nil, err
	}
	var out []*yaml.RNode
	for _, f := range files {
		out = append(out, f.Nodes...)
	}
	return out, nil
}

// PackageFile is one file of a package as readPackageFiles read it.
type PackageFile struct {
	// Rel is the file's path relative to the package; content its bytes.
	// Both are empty when kio read the package itself (a single file, or a
	// path readPackageFiles does not handle).
	Rel     string
	Content []byte
	Nodes   []*yaml.RNode
}

// fileHook, given a file read from disk and the function that parses it
// as kio would, sets f.nodes. It runs on the parsing goroutines, so work
// per file (the merge's preprocessing, or reusing an earlier parse of the
// same bytes) is spread over the CPUs too.
type fileHook func(f *PackageFile, parse func() ([]*yaml.RNode, error)) error

// ReadPackageFiles is readPackage keeping the files apart, in kio's order,
// with hook (when not nil) in charge of each file's nodes.
func ReadPackageFiles(r kio.LocalPackageReader, hook fileHook) ([]PackageFile, error) {
	whole := func() ([]PackageFile, error) {
		nodes, err := r.Read()
		if err != nil {
			return nil, err
		}
		f := PackageFile{Nodes: nodes}
		if hook != nil {
			if err := hook(&f, func() ([]*yaml.RNode, error) { return nodes, nil }); err != nil {
				return nil, err
			}
		}
		return []PackageFile{f}, nil
	}
	if r.PackagePath == "" {
		return whole() // kio's error
	}
	root, rels, err := ListPackageFiles(r)
	if err != nil {
		if errors.Is(err, ErrNotADir) {
			return whole() // a single file (or none): nothing to spread
		}
		return nil, err
	}
	files := make([]PackageFile, len(rels))
	for i, rel := range rels {
		if files[i], err = ReadListed(r, root, rel); err != nil {
			return nil, err
		}
	}
	errs := make([]error, len(rels))
	ForEachParallel(len(rels), func(i int) {
		parse := func() ([]*yaml.RNode, error) { return ParseListed(r, root, files[i]) }
		if hook == nil {
			files[i].Nodes, errs[i] = parse()
			return
		}
		errs[i] = hook(&files[i], parse)
	})
	for i := range rels {
		if errs[i] != nil {
			return nil, errs[i]
		}
	}
	return files, nil
}

// ErrNotADir: the reader's path is not a directory of the file system.
var ErrNotADir = errors.New("package path is not a directory")

// ListPackageFiles lists the files r reads, in r's order, relative to
// root, without reading them: kio's own walk (subpackages, hidden files
// and r's skip function as kio handles them) with every file skipped.
func ListPackageFiles(r kio.LocalPackageReader) (root string, rels []string, err error) {
	globs := r.MatchFilesGlob
	if len(globs) == 0 {
		globs = kio.DefaultMatch
	}
	dir, file, err := r.FileSystem.CleanedAbs(filepath.ToSlash(r.PackagePath))
	if err != nil {
		return "", nil, ErrNotADir
	}
	root = filepath.Join(string(dir), file)
	if !r.FileSystem.IsDir(root) {
		return "", nil, ErrNotADir
	}
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
		return "", nil, err
	}
	return root, rels, nil
}

// ReadListed reads file rel of the package r reads under root (as
// listPackageFiles gives them); an error names the file, as kio's does.
func ReadListed(r kio.LocalPackageReader, root, rel string) (PackageFile, error) {
	full := filepath.Join(root, rel)
	content, err := r.FileSystem.ReadFile(full)
	if err != nil {
		return PackageFile{}, kerrors.WrapPrefixf(err, "%s", full)
	}
	return PackageFile{Rel: rel, Content: content}, nil
}

// ParseListed parses a file readListed read, as r's reader would; an error
// names the file, as kio's does.
func ParseListed(r kio.LocalPackageReader, root string, f PackageFile) ([]*yaml.RNode, error) {
	nodes, err := ParseFile(r, f.Rel, f.Content)
	if err != nil {
		err = kerrors.WrapPrefixf(err, "%s", filepath.Join(root, f.Rel))
	}
	return nodes, err
}

// ParseFile parses one file of the package as r's reader would.
func ParseFile(r kio.LocalPackageReader, rel string, content []byte) ([]*yaml.RNode, error) {
	set := make(map[string]string, len(r.SetAnnotations)+6)
	for k, v := range r.SetAnnotations {
		set[k] = v
	}
	if !r.OmitReaderAnnotations {
		set[kioutil.PathAnnotation] = rel
		set[kioutil.LegacyPathAnnotation] = rel //nolint:staticcheck // kio sets both
	}
	if r.PreserveSeqIndent && !r.OmitReaderAnnotations {
		if ns, ok := decodeAnnotated(content, set); ok {
			return ns, nil
		}
	}
	br := &kio.ByteReader{
		DisableUnwrapping:     true,
		Reader:                bytes.NewReader(content),
		OmitReaderAnnotations: r.OmitReaderAnnotations,
		SetAnnotations:        set,
		PreserveSeqIndent:     r.PreserveSeqIndent,
		WrapBareSeqNode:       r.WrapBareSeqNode,
	}
	return br.Read()
}

// ForEachParallel calls f(0..n-1) on GOMAXPROCS goroutines.
func ForEachParallel(n int, f func(i int)) {
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

// reservedAnnotations are the ones kio.ByteReader reconciles between their
// current and legacy forms (CopyLegacyAnnotations) before setting its own.
var reservedAnnotations = []string{
	kioutil.PathAnnotation, kioutil.LegacyPathAnnotation, //nolint:staticcheck // kio reads both
	kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, //nolint:staticcheck // kio reads both
	kioutil.IdAnnotation, kioutil.LegacyIdAnnotation, //nolint:staticcheck // kio reads both
}

// decodeAnnotated is kio.ByteReader{DisableUnwrapping: true,
// PreserveSeqIndent: true, SetAnnotations: set}.Read() for files of plain
// resources, with the annotations written straight into the parsed nodes
// instead of through kyaml's filters (a metadata decode and path lookups
// per annotation, per resource). ok is false for anything else (bad YAML,
// bare sequences, resources that already carry path, index or id
// annotations, unusual metadata): kio's reader must read that file.
func decodeAnnotated(content []byte, set map[string]string) (out []*yaml.RNode, ok bool) {
	values, err := splitYAMLDocuments(strings.ReplaceAll(string(content), "\r\n", "\n"))
	if err != nil {
		return nil, false
	}
	keys := make([]string, 0, len(set)+3)
	for k := range set {
		keys = append(keys, k)
	}
	keys = append(keys, kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation) //nolint:staticcheck // kio sets both
	sort.Strings(keys)
	index := 0
	for i := range values {
		if i != len(values)-1 {
			values[i] += "\n"
		}
		doc := &yaml.Node{}
		err := yaml.NewDecoder(bytes.NewBufferString(values[i])).Decode(doc)
		if err == io.EOF {
			continue
		}
		if err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
			return nil, false
		}
		if yaml.IsYNodeEmptyDoc(doc) {
			continue
		}
		root := doc.Content[0]
		if root.Kind != yaml.MappingNode || !PlainMetadata(root) {
			return nil, false
		}
		for _, k := range reservedAnnotations {
			if lastAnnotation(root, k) != nil {
				return nil, false
			}
		}
		idx := strconv.Itoa(index)
		for _, k := range keys {
			v := set[k]
			switch k {
			case kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation: //nolint:staticcheck // kio sets both
				v = idx
			case kioutil.SeqIndentAnnotation:
				v = yaml.DeriveSeqIndentStyle(values[i])
			}
			setAnnotationNode(root, k, v)
		}
		out = append(out, yaml.NewRNode(doc))
		index++
	}
	return out, true
}

// setAnnotationNode is yaml.SetAnnotation(key, value) on a mapping whose
// metadata and annotations, where present, are mappings with unique keys
// (plainMetadata): empty annotations and metadata are cleared first,
// missing ones appended, an existing value is replaced keeping its style,
// a new one is single-quoted.
func setAnnotationNode(root *yaml.Node, key, value string) {
	if md := MapValue(root, yaml.MetadataField); md != nil {
		clearField(md, yaml.AnnotationsField, true)
	}
	clearField(root, yaml.MetadataField, true)
	child := func(m *yaml.Node, name string) *yaml.Node {
		if c := MapValue(m, name); c != nil {
			return c
		}
		c := &yaml.Node{Kind: yaml.MappingNode}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, c)
		return c
	}
	ann := child(child(root, yaml.MetadataField), yaml.AnnotationsField)
	v := &yaml.Node{Kind: yaml.ScalarNode}
	v.SetString(value)
	v.Style = yaml.SingleQuotedStyle
	if old := MapValue(ann, key); old != nil {
		v.Style = old.Style
		*old = *v
		return
	}
	ann.Content = append(ann.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
}

// yamlSeparator is kio's document separator: a line starting with ---.
var yamlSeparator = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n---.*\n`) })

// splitYAMLDocuments is kio's splitDocuments.
func splitYAMLDocuments(s string) ([]string, error) {
	docs := make([]string, 0)
	if len(s) > 0 {
		prev := 0
		for _, loc := range yamlSeparator().FindAllStringIndex(s, -1) {
			separator := s[loc[0]:loc[1]]
			if rest := strings.TrimSpace(separator[4:]); len(rest) > 0 && rest[0] != '#' {
				return nil, fmt.Errorf("invalid document separator: %s", strings.TrimSpace(separator))
			}
			docs = append(docs, s[prev:loc[0]])
			prev = loc[1]
		}
		docs = append(docs, s[prev:])
	}
	return docs, nil
}
