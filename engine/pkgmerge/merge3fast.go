package pkgmerge

import (
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge3"
	"sigs.k8s.io/kustomize/kyaml/yaml/walk"
)

// merge3Visitor is kyaml's merge3.Visitor with the same decisions reached
// faster. kyaml compares scalars and non-associative lists by encoding
// each of the three sides to YAML text (a new yaml.v3 encoder per node,
// half of an update's time); this visitor first compares the nodes
// themselves and encodes only when they differ in a way that might or
// might not change the text. Two nodes equal in every field the encoder
// reads (kind, tag, value, anchor, comments, children; the top node's style
// is forced by kyaml before encoding, so it is ignored) encode to the same
// text, and two plain scalars with different values encode to different
// text (YAML text decodes to one value), so both fast answers are kyaml's
// answers; any other case asks kyaml's encoder. TestResourceMergeMatchesKpt holds the result
// to kpt's.
type merge3Visitor struct{ merge3.Visitor }

var _ walk.Visitor = merge3Visitor{}

// VisitScalar is merge3.Visitor.VisitScalar with encodedEqual in place of
// comparing the encoded strings.
func (m merge3Visitor) VisitScalar(nodes walk.Sources, _ *openapi.ResourceSchema) (*yaml.RNode, error) {
	if nodes.Updated().IsTaggedNull() || nodes.Dest().IsTaggedNull() {
		return nil, nil // explicitly cleared from either dest or update
	}
	if yaml.IsMissingOrNull(nodes.Updated()) != yaml.IsMissingOrNull(nodes.Origin()) {
		return nodes.Updated(), nil // value added or removed in update
	}
	if yaml.IsMissingOrNull(nodes.Updated()) && yaml.IsMissingOrNull(nodes.Origin()) {
		return nodes.Dest(), nil
	}
	updateChanged, err := encodedDiffer(nodes.Origin(), nodes.Updated())
	if err != nil {
		return nil, err
	}
	if updateChanged {
		// kyaml: (dest == "" || dest == origin) && origin != update. An
		// encoded node is never empty, so dest == "" means no dest.
		destEmpty := !present(nodes.Dest())
		destChanged := false
		if !destEmpty {
			if destChanged, err = encodedDiffer(nodes.Origin(), nodes.Dest()); err != nil {
				return nil, err
			}
		}
		if destEmpty || !destChanged {
			return nodes.Updated(), nil // local unchanged, upstream changed
		}
	}
	if nodes.Updated().YNode().Value != nodes.Origin().YNode().Value {
		return nodes.Updated(), nil // value changed in update
	}
	return nodes.Dest(), nil // unchanged between origin and update
}

// VisitList is merge3.Visitor.VisitList; non-associative lists compare
// origin and update through encodedDiffer.
func (m merge3Visitor) VisitList(nodes walk.Sources, s *openapi.ResourceSchema, kind walk.ListKind) (*yaml.RNode, error) {
	if kind == walk.AssociativeList {
		return m.Visitor.VisitList(nodes, s, kind)
	}
	if nodes.Updated().IsTaggedNull() || nodes.Dest().IsTaggedNull() {
		return walk.ClearNode, nil
	}
	if yaml.IsMissingOrNull(nodes.Updated()) != yaml.IsMissingOrNull(nodes.Origin()) {
		return nodes.Updated(), nil
	}
	if yaml.IsMissingOrNull(nodes.Updated()) && yaml.IsMissingOrNull(nodes.Origin()) {
		return nodes.Dest(), nil
	}
	changed, err := encodedDiffer(nodes.Origin(), nodes.Updated())
	if err != nil {
		return nil, err
	}
	if changed {
		return nodes.Updated(), nil
	}
	return nodes.Dest(), nil
}

func present(n *yaml.RNode) bool { return n != nil && n.YNode() != nil }

// encodedDiffer reports whether a and b encode to different text the way
// merge3.Visitor encodes them (style forced to single-quoted flow; a
// missing node is the empty string).
func encodedDiffer(a, b *yaml.RNode) (bool, error) {
	pa, pb := present(a), present(b)
	if !pa && !pb {
		return false, nil
	}
	if pa && pb && sameNode(a.YNode(), b.YNode(), true) {
		return false, nil
	}
	if pa && pb && plainScalar(a.YNode()) && plainScalar(b.YNode()) && a.YNode().Value != b.YNode().Value {
		// YAML text decodes to one value, so scalars the encoder can
		// write with different values never encode to the same text.
		return true, nil
	}
	sa, err := mergeString(a)
	if err != nil {
		return false, err
	}
	sb, err := mergeString(b)
	if err != nil {
		return false, err
	}
	return sa != sb, nil
}

// mergeString is merge3.Visitor's text of a node.
func mergeString(n *yaml.RNode) (string, error) {
	if !present(n) {
		return "", nil
	}
	y := n.YNode()
	style := y.Style
	defer func() { y.Style = style }()
	y.Style = yaml.FlowStyle | yaml.SingleQuotedStyle
	return n.String()
}

// sameNode reports whether a and b are equal in everything the YAML
// encoder reads; top ignores the style of the node itself. Aliases are
// never reported equal (the encoder follows them).
func sameNode(a, b *yaml.Node, top bool) bool {
	if a == b {
		return true
	}
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || a.Anchor != b.Anchor ||
		a.HeadComment != b.HeadComment || a.LineComment != b.LineComment || a.FootComment != b.FootComment ||
		a.Alias != nil || b.Alias != nil || len(a.Content) != len(b.Content) || (!top && a.Style != b.Style) {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i], false) {
			return false
		}
	}
	return true
}

// plainScalar: a scalar without anchor, alias or comments, whose value
// yaml.v3 encodes without failing (valid UTF-8) under a core tag.
func plainScalar(n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode || n.Alias != nil || n.Anchor != "" ||
		n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" || !utf8.ValidString(n.Value) {
		return false
	}
	switch n.Tag {
	case "", yaml.NodeTagString, yaml.NodeTagInt, yaml.NodeTagBool, yaml.NodeTagFloat:
		return true
	}
	return false
}
