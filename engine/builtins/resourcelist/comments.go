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

func hasComment(n *yaml.Node) bool {
	return n.HeadComment != "" || n.LineComment != "" || n.FootComment != ""
}

func isFolded(n *yaml.Node) bool { return n.Style&yaml.FoldedStyle != 0 }

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
