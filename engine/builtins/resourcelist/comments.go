package resourcelist

import (
	"github.com/kptbot/kptbot/engine/internal/mergewalk"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	kwalk "sigs.k8s.io/kustomize/kyaml/yaml/walk"
)

// copyComments is kyaml's comments.CopyComments (the same visitor, the
// same walk) through kptbot's fork of kyaml's walker, which does not
// decode field metadata from every comment-less node: reconciling a
// function's output with its input spent most of its time there.
// TestCopyCommentsMatchesKyaml holds the two to the same result.
func copyComments(from, to *yaml.RNode) error {
	if !anyNode(from.YNode(), commentOrAlias) && !anyNode(to.YNode(), foldedOrAlias) && sameShape(from.YNode(), to.YNode()) {
		return nil
	}
	return walkComments(from, to)
}

// walkComments is copyComments without its shortcut: the walk changes
// to only by copying comments from from (through the walk's own copy of
// it, all the walk adds to) and by turning to's folded scalars double
// quoted, so with neither a comment in from nor a folded scalar in to it
// changes nothing; it fails only where paired nodes differ in kind, which
// sameShape rules out (FuzzCopyCommentsShortcut).
func walkComments(from, to *yaml.RNode) error {
	// from must not change; kyaml walks a copy too
	fromCopy := from.Copy()
	copyFieldComments(fromCopy, to)
	w := mergewalk.Walker{
		Sources:            []*yaml.RNode{fromCopy, to},
		Visitor:            commentCopier{},
		VisitKeysAsScalars: true,
	}
	if !inSequence(from.YNode(), false, hasComment) && !inSequence(to.YNode(), false, isFolded) {
		w.Schemas = &mergewalk.SchemaCache{WithoutResourceTypes: true}
	}
	_, err := w.Walk()
	return err
}

// inSequence reports whether some node at or under a sequence of n's
// tree satisfies has.
//
// The resource's OpenAPI schema decides only how the walk pairs the
// elements of sequences (which are associative, and by which keys); maps
// are paired by field name either way. When from has no comment at or
// under any sequence and to no folded scalar there (the copier's only
// other effect), nothing the copier does depends on that pairing, and
// the walk may skip the schema: kyaml parses its whole built-in OpenAPI
// document (~90 ms, ~30 MB) on the first lookup, which most small
// renders would otherwise pay for a comment-free copy.
func inSequence(n *yaml.Node, under bool, has func(*yaml.Node) bool) bool {
	if n == nil {
		return false
	}
	if under && has(n) {
		return true
	}
	under = under || n.Kind == yaml.SequenceNode
	for _, c := range n.Content {
		if inSequence(c, under, has) {
			return true
		}
	}
	return false
}

// sameShape reports whether every pair of nodes the walk could pair has
// the same kind: maps by key, and any element of one list with any of
// the other (the schema decides how lists pair); keys non-empty scalars.
func sameShape(f, t *yaml.Node) bool {
	if f == nil || t == nil {
		return true
	}
	if f.Kind != t.Kind || len(f.Content) > 64 || len(t.Content) > 64 {
		return false
	}
	switch f.Kind {
	case yaml.MappingNode:
		// an empty or repeated key trips the walk's field lookup
		if !uniqueKeys(f) || !uniqueKeys(t) {
			return false
		}
		for _, m := range []*yaml.Node{f, t} {
			for i := 0; i < len(m.Content); i += 2 {
				if m.Content[i].Kind != yaml.ScalarNode || m.Content[i].Value == "" {
					return false
				}
			}
		}
		for i := 0; i < len(f.Content); i += 2 {
			for j := 0; j < len(t.Content); j += 2 {
				if f.Content[i].Value == t.Content[j].Value && !sameShape(f.Content[i+1], t.Content[j+1]) {
					return false
				}
			}
		}
	case yaml.SequenceNode:
		for _, a := range f.Content {
			for _, b := range t.Content {
				if !sameShape(a, b) {
					return false
				}
			}
		}
	case yaml.ScalarNode:
	default:
		return false
	}
	return true
}

// anyNode reports whether some node of the tree satisfies has.
func anyNode(n *yaml.Node, has func(*yaml.Node) bool) bool {
	if n == nil {
		return false
	}
	if has(n) {
		return true
	}
	for _, c := range n.Content {
		if anyNode(c, has) {
			return true
		}
	}
	return false
}

func hasComment(n *yaml.Node) bool {
	return n.HeadComment != "" || n.LineComment != "" || n.FootComment != ""
}

func isFolded(n *yaml.Node) bool { return n.Style&yaml.FoldedStyle != 0 }

// commentOrAlias and foldedOrAlias leave trees with aliases to the walk.
func commentOrAlias(n *yaml.Node) bool { return hasComment(n) || n.Kind == yaml.AliasNode }
func foldedOrAlias(n *yaml.Node) bool  { return isFolded(n) || n.Kind == yaml.AliasNode }

// commentCopier is kyaml's comments.copier.
type commentCopier struct{}

func (commentCopier) VisitMap(s kwalk.Sources, _ *openapi.ResourceSchema) (*yaml.RNode, error) {
	copyFieldComments(s.Dest(), s.Origin())
	return s.Dest(), nil
}

func (commentCopier) VisitScalar(s kwalk.Sources, _ *openapi.ResourceSchema) (*yaml.RNode, error) {
	to := s.Origin()
	// as kyaml: a folded scalar's line comment would be written without
	// a space (kpt issue 766)
	if to != nil && to.Document().Style == yaml.FoldedStyle {
		to.Document().Style = yaml.DoubleQuotedStyle
	}
	copyFieldComments(s.Dest(), to)
	return s.Dest(), nil
}

func (commentCopier) VisitList(s kwalk.Sources, _ *openapi.ResourceSchema, _ kwalk.ListKind) (*yaml.RNode, error) {
	copyFieldComments(s.Dest(), s.Origin())
	destItems := s.Dest().Content()
	originItems := s.Origin().Content()
	for i := 0; i < len(destItems) && i < len(originItems); i++ {
		if destItems[i].Value == originItems[i].Value {
			if err := copyComments(yaml.NewRNode(destItems[i]), yaml.NewRNode(originItems[i])); err != nil {
				return nil, err
			}
		}
	}
	return s.Dest(), nil
}

// copyFieldComments is kyaml's: each comment to's node lacks, from from.
func copyFieldComments(from, to *yaml.RNode) {
	if from == nil || to == nil {
		return
	}
	if to.Document().LineComment == "" {
		to.Document().LineComment = from.Document().LineComment
	}
	if to.Document().HeadComment == "" {
		to.Document().HeadComment = from.Document().HeadComment
	}
	if to.Document().FootComment == "" {
		to.Document().FootComment = from.Document().FootComment
	}
}
