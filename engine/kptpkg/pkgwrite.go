package kptpkg

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	kerrors "sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// WritePackage writes nodes into the package at root as
// kio.LocalPackageWriter{PackagePath: root, ClearAnnotations: clear,
// FileSystem: fsys}.Write(nodes) does, byte for byte, at a fraction of the
// cost: kio copies every resource, decodes its metadata for every sort
// comparison and every annotation it clears, and encodes the files one
// after the other. Here the reader's annotations are read directly and
// cleared on copies of the few nodes involved (detachMetadata), and the
// files are encoded on all CPUs. Anything out of the ordinary (a
// resource without its path and index annotations, an index that is not
// a number, metadata that is not a mapping, JSON files) takes kio's own
// code for that step. TestWritePackageMatchesKio holds it to kio.
func WritePackage(fsys filesys.FileSystemOrOnDisk, root string, nodes []*yaml.RNode, clear []string) error {
	for _, n := range nodes {
		if !PlainMetadata(n.YNode()) {
			return kio.LocalPackageWriter{PackagePath: root, ClearAnnotations: clear, FileSystem: fsys}.Write(nodes)
		}
	}
	if !AnnotatedForWrite(nodes) {
		if err := kioutil.DefaultPathAndIndexAnnotation("", nodes); err != nil {
			return err
		}
	}
	if !fsys.Exists(root) {
		return kerrors.WrapPrefixf(os.ErrNotExist, "could not write to %q", root)
	}
	if !fsys.IsDir(root) {
		root = filepath.Dir(root)
	}
	for _, n := range nodes {
		for _, key := range []string{kioutil.IndexAnnotation, kioutil.PathAnnotation} {
			if v := lastAnnotation(n.YNode(), key); v == nil || v.Value == "" {
				return kerrors.Errorf("resources must be annotated with %s to be written to files", key)
			}
		}
	}
	files := map[string][]*yaml.RNode{}
	var paths []string
	for _, n := range nodes {
		p := lastAnnotation(n.YNode(), kioutil.PathAnnotation).Value
		if _, ok := files[p]; !ok {
			paths = append(paths, p)
		}
		files[p] = append(files[p], n)
		if filepath.IsAbs(p) {
			return kerrors.Errorf("package paths may not be absolute paths")
		}
		if strings.Contains(filepath.Clean(p), "..") {
			return fmt.Errorf("resource must be written under package %s: %s", root, filepath.Clean(p))
		}
	}
	for _, p := range paths {
		if err := SortByIndex(files[p]); err != nil {
			return kerrors.Wrap(err)
		}
	}
	clear = append(append([]string{}, clear...), kioutil.PathAnnotation, kioutil.LegacyPathAnnotation) //nolint:staticcheck // kio clears both
	for _, p := range paths {
		out := filepath.Join(root, p)
		if fsys.IsDir(out) {
			return fmt.Errorf("config.kubernetes.io/path cannot be a directory: %s", p)
		}
		if err := fsys.MkdirAll(filepath.Dir(out)); err != nil {
			return kerrors.Wrap(err)
		}
	}
	contents := make([][]byte, len(paths))
	errs := make([]error, len(paths))
	ForEachParallel(len(paths), func(i int) {
		contents[i], errs[i] = EncodeFile(files[paths[i]], clear)
	})
	for i, p := range paths {
		if errs[i] != nil {
			return kerrors.Wrap(errs[i])
		}
		if err := fsys.WriteFile(filepath.Join(root, p), contents[i]); err != nil {
			return kerrors.Wrap(err)
		}
	}
	return nil
}

// AnnotatedForWrite reports whether every node carries the path and index
// annotations in both their current and legacy forms (and the id ones in
// both forms or neither): then kio's DefaultPathAndIndexAnnotation and
// CopyLegacyAnnotations change nothing.
func AnnotatedForWrite(nodes []*yaml.RNode) bool {
	for _, n := range nodes {
		y := n.YNode()
		for _, pair := range [][2]string{
			{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation},   //nolint:staticcheck // kio copies between them
			{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation}, //nolint:staticcheck // kio copies between them
			{kioutil.IdAnnotation, kioutil.LegacyIdAnnotation},       //nolint:staticcheck // kio copies between them
		} {
			a, b := lastAnnotation(y, pair[0]), lastAnnotation(y, pair[1])
			set := func(v *yaml.Node) bool { return v != nil && v.Value != "" }
			if pair[0] == kioutil.IdAnnotation {
				if set(a) != set(b) {
					return false
				}
				continue
			}
			if !set(a) || !set(b) {
				return false
			}
		}
	}
	return true
}

// PlainMetadata reports whether n is a mapping whose metadata and
// metadata.annotations, where present, are mappings without duplicate
// keys and with scalar annotation values: the shapes the in-place
// annotation edits here handle exactly as kyaml (which decodes metadata,
// and fails on duplicates).
func PlainMetadata(n *yaml.Node) bool {
	if !plainMapping(n) {
		return false
	}
	md := lastMapValue(n, yaml.MetadataField)
	if md == nil {
		return true
	}
	if !plainMapping(md) {
		return false
	}
	ann := lastMapValue(md, yaml.AnnotationsField)
	if ann == nil {
		return true
	}
	if !plainMapping(ann) {
		return false
	}
	for i := 1; i < len(ann.Content); i += 2 {
		if ann.Content[i].Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}

// plainMapping: a mapping node with unique scalar keys.
func plainMapping(n *yaml.Node) bool {
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content)%2 != 0 {
		return false
	}
	for i := 0; i < len(n.Content); i += 2 {
		if n.Content[i].Kind != yaml.ScalarNode {
			return false
		}
		for j := 0; j < i; j += 2 {
			if n.Content[j].Value == n.Content[i].Value {
				return false
			}
		}
	}
	return true
}

// lastAnnotation is the value kyaml's GetAnnotations reports for key (the
// last of duplicates wins).
func lastAnnotation(n *yaml.Node, key string) *yaml.Node {
	if n == nil {
		return nil
	}
	return lastMapValue(lastMapValue(lastMapValue(n, yaml.MetadataField), yaml.AnnotationsField), key)
}

func lastMapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var v *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			v = n.Content[i+1]
		}
	}
	return v
}

// SortByIndex is kioutil.SortNodes for the resources of one file, with
// each index parsed once; kio's sort reports indexes that are not numbers.
func SortByIndex(ns []*yaml.RNode) error {
	idx := make(map[*yaml.RNode]int, len(ns))
	for _, n := range ns {
		i, err := strconv.Atoi(lastAnnotation(n.YNode(), kioutil.IndexAnnotation).Value)
		if err != nil {
			return kioutil.SortNodes(ns)
		}
		idx[n] = i
	}
	sort.SliceStable(ns, func(i, j int) bool { return idx[ns[i]] < idx[ns[j]] })
	return nil
}

// EncodeFile is kio.ByteWriter.Write for one file's sorted resources.
func EncodeFile(nodes []*yaml.RNode, clear []string) ([]byte, error) {
	var buf bytes.Buffer
	p := lastAnnotation(nodes[0].YNode(), kioutil.PathAnnotation).Value
	for _, glob := range kio.JSONMatch {
		if ok, _ := filepath.Match(glob, filepath.Base(p)); ok {
			err := kio.ByteWriter{Writer: &buf, ClearAnnotations: clear}.Write(nodes)
			return buf.Bytes(), err
		}
	}
	wide := make([]bool, len(nodes))
	docs := make([]*yaml.Node, len(nodes))
	for i, n := range nodes {
		if v := lastAnnotation(n.YNode(), kioutil.SeqIndentAnnotation); v != nil {
			wide[i] = v.Value == string(yaml.WideSequenceStyle)
		}
		doc, y := detachMetadata(n.Document())
		for _, key := range append([]string{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation}, clear...) { //nolint:staticcheck // kio clears both
			clearField(lastMapValue(lastMapValue(y, yaml.MetadataField), yaml.AnnotationsField), key, false)
		}
		if md := lastMapValue(y, yaml.MetadataField); md != nil {
			clearField(md, yaml.AnnotationsField, true)
		}
		clearField(y, yaml.MetadataField, true)
		docs[i] = doc
	}
	if err := encodeStream(&buf, docs, wide); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// detachMetadata copies the nodes on the path document -> resource ->
// metadata -> annotations (each with its own Content slice) and returns the
// copied document and resource: clearing annotations on them leaves the
// caller's nodes alone, as kio's deep copy does, even where functions made
// resources share nodes, and lets files be encoded concurrently.
func detachMetadata(doc *yaml.Node) (out, root *yaml.Node) {
	clone := func(n *yaml.Node) *yaml.Node {
		c := *n
		c.Content = append([]*yaml.Node(nil), n.Content...)
		return &c
	}
	out = clone(doc)
	root = out
	if out.Kind == yaml.DocumentNode && len(out.Content) > 0 {
		root = clone(out.Content[0])
		out.Content[0] = root
	}
	detach := func(m *yaml.Node, key string) *yaml.Node {
		if m == nil || m.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				m.Content[i+1] = clone(m.Content[i+1])
				return m.Content[i+1]
			}
		}
		return nil
	}
	detach(detach(root, yaml.MetadataField), yaml.AnnotationsField)
	return out, root
}

// encodeStream is kio.ByteWriter's encoding of documents as one YAML
// stream.
func encodeStream(w io.Writer, docs []*yaml.Node, wide []bool) error {
	enc := yaml.NewEncoder(w)
	for i, doc := range docs {
		if wide[i] {
			enc.DefaultSeqIndent()
		} else {
			enc.CompactSeqIndent()
		}
		if err := enc.Encode(unwrapBareSeq(doc)); err != nil {
			_ = enc.Close()
			return err
		}
	}
	return enc.Close()
}

// clearField is kyaml's FieldClearer on a mapping: it removes the first
// field named name (only if its value has no content, with ifEmpty).
func clearField(m *yaml.Node, name string, ifEmpty bool) {
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != name {
			continue
		}
		if ifEmpty && len(m.Content[i+1].Content) > 0 {
			continue
		}
		m.Content = append(m.Content[:i], m.Content[i+2:]...)
		return
	}
}

// unwrapBareSeq is kio's upWrapBareSequenceNode: a bare sequence the
// reader wrapped in a mapping is written as the sequence again.
func unwrapBareSeq(doc *yaml.Node) *yaml.Node {
	top := doc
	if top.Kind == yaml.DocumentNode && len(top.Content) > 0 {
		top = top.Content[0]
	}
	if MapValue(top, yaml.BareSeqNodeWrappingKey) == nil {
		return doc
	}
	seq, err := yaml.NewRNode(doc).Pipe(yaml.Lookup(yaml.BareSeqNodeWrappingKey))
	if err == nil && !seq.IsNilOrEmpty() {
		return seq.YNode()
	}
	return doc
}
