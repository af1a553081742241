// Copyright 2019 The Kubernetes Authors.
// SPDX-License-Identifier: Apache-2.0
// Forked from sigs.k8s.io/kustomize/kyaml v0.21.1 yaml/walk (see doc.go).

package mergewalk

import (
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fieldmeta"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/sets"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	kwalk "sigs.k8s.io/kustomize/kyaml/yaml/walk"
)

// walkMap returns the value of VisitMap
//
// - call VisitMap
// - set the return value on l.Dest
// - walk each source field
// - set each source field value on l.Dest
func (l Walker) walkMap() (*yaml.RNode, error) {
	// get the new map value
	dest, err := setDestNode(l.Sources)(l.VisitMap(l.Sources, l.Schema))
	if dest == nil || err != nil {
		return nil, err
	}

	// recursively set the field values on the map
	for _, key := range l.fieldNames() {
		// kptbot: each source's field is looked up once per key (kyaml
		// looked it up here and again in fieldValue; nothing between the
		// two changes the sources).
		fields := l.lookup(key)
		var res *yaml.RNode
		var keys []*yaml.RNode
		if l.VisitKeysAsScalars {
			// visit the map keys as if they were scalars,
			// this is necessary if doing things such as copying
			// comments
			for i := range l.Sources {
				// construct the sources from the keys
				if l.Sources[i] == nil {
					keys = append(keys, nil)
					continue
				}
				field := fields[i]
				if field == nil || yaml.IsMissingOrNull(field.Key) {
					keys = append(keys, nil)
					continue
				}
				keys = append(keys, field.Key)
			}
			// visit the sources as a scalar
			// keys don't have any schema --pass in nil
			res, err = l.Visitor.VisitScalar(keys, nil)
			if err != nil {
				return nil, err
			}
		}

		var s *openapi.ResourceSchema
		if l.Schema != nil {
			s = l.Schemas.field(l.Schema, key)
		}
		fv, commentSch, keyStyles := l.fieldValue(fields)
		if commentSch != nil {
			s = commentSch
		}
		val, err := Walker{
			VisitKeysAsScalars:    l.VisitKeysAsScalars,
			InferAssociativeLists: l.InferAssociativeLists,
			Visitor:               l,
			Schema:                s,
			Schemas:               l.Schemas,
			Sources:               fv,
			MergeOptions:          l.MergeOptions,
			Path:                  append(l.Path, key)}.Walk()
		if err != nil {
			return nil, err
		}

		// transfer the comments of res to dest node
		var comments yaml.Comments
		if !yaml.IsMissingOrNull(res) {
			comments = yaml.Comments{
				LineComment: res.YNode().LineComment,
				HeadComment: res.YNode().HeadComment,
				FootComment: res.YNode().FootComment,
			}
			if len(keys) > 0 && !yaml.IsMissingOrNull(keys[kwalk.DestIndex]) {
				keys[kwalk.DestIndex].YNode().HeadComment = res.YNode().HeadComment
				keys[kwalk.DestIndex].YNode().LineComment = res.YNode().LineComment
				keys[kwalk.DestIndex].YNode().FootComment = res.YNode().FootComment
			}
		}

		// this handles empty and non-empty values
		fieldSetter := yaml.FieldSetter{
			Name:           key,
			Comments:       comments,
			AppendKeyStyle: keyStyles[val],
			Value:          val,
		}
		// kptbot: FieldSetter asks a YAML 1.1 parser whether a plain string
		// would read as another type; for a plainWord it would not, and the
		// answer only decides whether to quote the value. A non-zero style
		// skips the question: an existing field gives the value its own
		// style anyway, and a new field gets the value back unstyled.
		var skipped *yaml.Node
		if y := val.YNode(); y != nil && y.Kind == yaml.ScalarNode && y.Tag == yaml.NodeTagString && y.Style == 0 && plainWord(y.Value) {
			if f := dest.Field(key); f == nil || f.Value.YNode() == y {
				skipped = y // appended, or dest's own node: unstyled either way
			}
			y.Style = yaml.DoubleQuotedStyle
		}
		_, err = dest.Pipe(fieldSetter)
		if skipped != nil {
			skipped.Style = 0
		}
		if err != nil {
			return nil, err
		}
	}

	return dest, nil
}

// plainWord reports whether a YAML 1.1 parser certainly reads value as a
// string: a letter, then letters, digits and "-_./", and not one of YAML
// 1.1's boolean or null words in any case.
func plainWord(value string) bool {
	if value == "" || !('a' <= value[0] && value[0] <= 'z' || 'A' <= value[0] && value[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/') {
			return false
		}
	}
	switch strings.ToLower(value) {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null":
		return false
	}
	return true
}

// valueIfPresent returns node.Value if node is non-nil, otherwise returns nil
func (l Walker) valueIfPresent(node *yaml.MapNode) (*yaml.RNode, *openapi.ResourceSchema) {
	if node == nil {
		return nil, nil
	}

	// kptbot: without comments there is no field metadata to read; kyaml
	// would return an empty schema, which its caller (fieldValue) treats
	// exactly as none.
	if noFieldMeta(node.Value) && noFieldMeta(node.Key) {
		return node.Value, nil
	}

	// parse the schema for the field if present
	var s *openapi.ResourceSchema
	fm := fieldmeta.FieldMeta{}
	var err error
	// check the value for a schema
	if err = fm.Read(node.Value); err == nil {
		s = &openapi.ResourceSchema{Schema: &fm.Schema}
		if fm.Schema.Ref.String() != "" {
			r, err := openapi.Resolve(&fm.Schema.Ref, openapi.Schema())
			if err == nil && r != nil {
				s.Schema = r
			}
		}
	}
	// check the key for a schema -- this will be used
	// when the value is a Sequence (comments are attached)
	// to the key
	if fm.IsEmpty() {
		if err = fm.Read(node.Key); err == nil {
			s = &openapi.ResourceSchema{Schema: &fm.Schema}
		}
		if fm.Schema.Ref.String() != "" {
			r, err := openapi.Resolve(&fm.Schema.Ref, openapi.Schema())
			if err == nil && r != nil {
				s.Schema = r
			}
		}
	}
	return node.Value, s
}

// fieldNames returns a sorted slice containing the names of all fields that appear in any of
// the sources
func (l Walker) fieldNames() []string {
	fields := sets.String{}
	for _, s := range l.Sources {
		if s == nil {
			continue
		}
		// don't check error, we know this is a mapping node
		sFields, _ := s.Fields()
		fields.Insert(sFields...)
	}
	result := fields.List()
	sort.Strings(result)
	return result
}

// lookup returns each source's field named fieldName, as
// l.Sources[i].Field(fieldName) does (nil for a nil source).
func (l Walker) lookup(fieldName string) []*yaml.MapNode {
	out := make([]*yaml.MapNode, len(l.Sources))
	for i, src := range l.Sources {
		if src == nil {
			continue
		}
		y := src.YNode()
		if y == nil || y.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(y.Content); j += 2 {
			if y.Content[j].Value == fieldName {
				out[i] = &yaml.MapNode{Key: yaml.NewRNode(y.Content[j]), Value: yaml.NewRNode(y.Content[j+1])}
				break
			}
		}
	}
	return out
}

// fieldValue returns a slice containing each source's value for the field
// (fields, from lookup), the schema, and a map of each source's value to
// the style for the source's key.
func (l Walker) fieldValue(fields []*yaml.MapNode) ([]*yaml.RNode, *openapi.ResourceSchema, map[*yaml.RNode]yaml.Style) {
	var values []*yaml.RNode
	var sch *openapi.ResourceSchema
	keyStyles := make(map[*yaml.RNode]yaml.Style, len(l.Sources))
	for i := range l.Sources {
		if l.Sources[i] == nil {
			values = append(values, nil)
			continue
		}
		field := fields[i]
		f, s := l.valueIfPresent(field)
		values = append(values, f)
		if field != nil && field.Key != nil && field.Key.YNode() != nil {
			keyStyles[f] = field.Key.YNode().Style
		}
		if sch == nil && !s.IsMissingOrNull() {
			sch = s
		}
	}
	return values, sch, keyStyles
}
