package kptpkg

import (
	"bytes"
	"hash/maphash"
	"io"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// UpstreamIdentifierAnnotation is kpt's bookkeeping twin of the kpt-merge
// comment; its presence alone is not a change worth rewriting a file for.
const UpstreamIdentifierAnnotation = "internal.kpt.dev/upstream-identifier"

// PreserveUntouched gives every file of after that means the same as in
// before its original bytes back. kpt's merge and render re-serialize every
// resource; this keeps comments, spacing and quoting of the files nothing
// really changed, so diffs and PRs show only real changes.
// Files are compared on all CPUs: each comparison parses both versions.
func PreserveUntouched(before, after Tree) {
	var candidates []string
	for p, b := range after {
		old, ok := before[p]
		if !ok || bytes.Equal(old, b) || !isYAMLPath(p) {
			continue
		}
		candidates = append(candidates, p)
	}
	same := make([]bool, len(candidates))
	ForEachParallel(len(candidates), func(i int) {
		same[i] = SameMeaning(before[candidates[i]], after[candidates[i]])
	})
	for i, p := range candidates {
		if same[i] {
			after[p] = before[p]
		}
	}
}

func isYAMLPath(p string) bool {
	return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || p == KptfileName || strings.HasSuffix(p, "/"+KptfileName)
}

// SameMeaning reports whether two YAML streams hold the same documents, in
// the same order, ignoring formatting, comments, map key order and
// bookkeeping annotations (see fingerprint).
func SameMeaning(a, b []byte) bool {
	seed := maphash.MakeSeed()
	da, db := newDocStream(a), newDocStream(b)
	if da == nil || db == nil {
		return SameMeaningRead(seed, a, b)
	}
	// Compare document by document and stop at the first difference:
	// files a merge or render rewrote usually differ early.
	for {
		na, errA := da.next()
		nb, errB := db.next()
		switch {
		case errA != nil || errB != nil:
			return false
		case na == nil || nb == nil:
			return na == nil && nb == nil
		case Fingerprint(seed, na) != Fingerprint(seed, nb):
			return false
		}
	}
}

// SameMeaningRead compares the streams as kio's ByteReader reads them.
func SameMeaningRead(seed maphash.Seed, a, b []byte) bool {
	pa, err1 := prints(seed, a)
	pb, err2 := prints(seed, b)
	if err1 != nil || err2 != nil || len(pa) != len(pb) {
		return false
	}
	for i := range pa {
		if pa[i] != pb[i] {
			return false
		}
	}
	return true
}

// docStream yields the documents kio.ByteReader{OmitReaderAnnotations:
// true} reads from a stream of several documents, one at a time. (A
// single document may be a List that kio unwraps; newDocStream leaves
// those to kio.)
type docStream struct {
	values []string
	i      int
}

func newDocStream(b []byte) *docStream {
	values, err := splitYAMLDocuments(strings.ReplaceAll(string(b), "\r\n", "\n"))
	if err != nil || len(values) < 2 {
		return nil
	}
	for i := range values[:len(values)-1] {
		values[i] += "\n"
	}
	return &docStream{values: values}
}

// next returns the next document's content node, nil at the end.
func (d *docStream) next() (*yaml.Node, error) {
	for d.i < len(d.values) {
		v := d.values[d.i]
		d.i++
		doc := &yaml.Node{}
		err := yaml.NewDecoder(bytes.NewBufferString(v)).Decode(doc)
		if err == io.EOF {
			continue
		}
		if err != nil {
			return nil, err
		}
		if yaml.IsYNodeEmptyDoc(doc) || yaml.IsMissingOrNull(yaml.NewRNode(doc)) {
			continue
		}
		return doc.Content[0], nil
	}
	return nil, nil
}

func prints(seed maphash.Seed, b []byte) ([]uint64, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(nodes))
	for i, n := range nodes {
		out[i] = Fingerprint(seed, n.YNode())
	}
	return out, nil
}
