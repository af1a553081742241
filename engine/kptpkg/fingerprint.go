package kptpkg

import (
	"fmt"
	"hash/maphash"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Fingerprint hashes what a resource means, ignoring formatting, comments,
// map key order and the bookkeeping annotations readers and kpt add, so
// the renderer can tell which files a pipeline really changed without
// serializing them. Two resources sameMeaning calls equal hash equal.
func Fingerprint(seed maphash.Seed, n *yaml.Node) uint64 {
	return hashNode(seed, n, 0, false)
}

// MeansAsRead reports whether a file's resources mean what they meant
// when read: as many, at indexes 0..n-1, with the fingerprints before
// holds (in file order). Such a file keeps its bytes, comments and quirks
// included, instead of being written again.
func MeansAsRead(seed maphash.Seed, before []uint64, nodes []*yaml.RNode) bool {
	if len(before) != len(nodes) {
		return false
	}
	sorted := append([]*yaml.RNode(nil), nodes...)
	sort.SliceStable(sorted, func(i, j int) bool { return IndexOf(sorted[i]) < IndexOf(sorted[j]) })
	for i, r := range sorted {
		if IndexOf(r) != i || Fingerprint(seed, r.YNode()) != before[i] {
			return false
		}
	}
	return true
}

// ExactFingerprint also covers comments and scalar styles: two resources
// with equal exact fingerprints serialize the same (bookkeeping aside).
func ExactFingerprint(seed maphash.Seed, n *yaml.Node) uint64 {
	return hashNode(seed, n, 0, true)
}

// ignoredAnnotation reports bookkeeping annotations.
func ignoredAnnotation(k string) bool {
	return strings.HasPrefix(k, "internal.config.kubernetes.io/") ||
		k == "config.kubernetes.io/path" || k == "config.kubernetes.io/index" || k == "config.k8s.io/id" ||
		k == MergeSourceAnnotation ||
		k == UpstreamIdentifierAnnotation
}

const (
	depthTop = iota
	depthMetadata
	depthAnnotations
	depthOther
)

func hashString(seed maphash.Seed, kind byte, s string) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteByte(kind)
	h.WriteString(s)
	return h.Sum64()
}

func hashNode(seed maphash.Seed, n *yaml.Node, where int, exact bool) uint64 {
	h := hashKind(seed, n, where, exact)
	if exact && (n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" || n.Style != 0) {
		h ^= hashString(seed, 'c', fmt.Sprintf("%d\x00%s\x00%s\x00%s", n.Style, n.HeadComment, n.LineComment, n.FootComment))
	}
	return h
}

func hashKind(seed maphash.Seed, n *yaml.Node, where int, exact bool) uint64 {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return 0
		}
		return hashNode(seed, n.Content[0], where, exact)
	case yaml.AliasNode:
		if n.Alias != nil {
			return hashNode(seed, n.Alias, where, exact)
		}
		return 0
	case yaml.ScalarNode:
		return hashString(seed, 's', n.ShortTag()+"\x00"+n.Value)
	case yaml.SequenceNode:
		var h maphash.Hash
		h.SetSeed(seed)
		h.WriteByte('[')
		var buf [8]byte
		for _, c := range n.Content {
			v := hashNode(seed, c, depthOther, exact)
			for i := range buf {
				buf[i] = byte(v >> (8 * i))
			}
			h.Write(buf[:])
		}
		return h.Sum64()
	case yaml.MappingNode:
		// Key order does not matter: combine pairs commutatively.
		var sum uint64 = 0x9e3779b97f4a7c15
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			child := depthOther
			switch {
			case where == depthTop && k == "metadata":
				child = depthMetadata
			case where == depthMetadata && k == "annotations":
				child = depthAnnotations
				if v.Kind == yaml.MappingNode && onlyIgnored(v) {
					continue // an annotations map of bookkeeping alone is no annotations
				}
			case where == depthAnnotations && ignoredAnnotation(k):
				continue
			}
			kh := hashString(seed, 'k', k)
			if exact {
				kh ^= hashNode(seed, n.Content[i], depthOther, true)
			}
			vh := hashNode(seed, v, child, exact)
			sum += (kh ^ (vh * 0xff51afd7ed558ccd)) * 0xc4ceb9fe1a85ec53
		}
		return sum
	}
	return 0
}

func onlyIgnored(m *yaml.Node) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !ignoredAnnotation(m.Content[i].Value) {
			return false
		}
	}
	return true
}

// MergeSourceAnnotation is the annotation kpt's merge reader puts on each
// resource to say which tree (origin, updated or local) it came from.
const MergeSourceAnnotation = "config.kubernetes.io/merge-source"
