// Copyright 2019 The Kubernetes Authors.
// SPDX-License-Identifier: Apache-2.0
// Forked from sigs.k8s.io/kustomize/kyaml v0.21.1 yaml/walk (see doc.go).

package mergewalk

import (
	"strings"

	kwalk "sigs.k8s.io/kustomize/kyaml/yaml/walk"

	"sigs.k8s.io/kustomize/kyaml/fieldmeta"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/schema"
)

// Walker walks the Source RNode and modifies the RNode provided to GrepFilter.
type Walker struct {
	// Visitor is invoked by GrepFilter
	kwalk.Visitor

	Schema *openapi.ResourceSchema

	// Schemas, when set, caches schema lookups across walks (kptbot).
	Schemas *SchemaCache

	// Source is the RNode to walk.  All Source fields and associative list elements
	// will be visited.
	Sources kwalk.Sources

	// Path is the field path to the current Source Node.
	Path []string

	// InferAssociativeLists if set to true will infer merge strategies for
	// fields which it doesn't have the schema based on the fields in the
	// list elements.
	InferAssociativeLists bool

	// VisitKeysAsScalars if true will call VisitScalar on map entry keys,
	// providing nil as the OpenAPI schema.
	VisitKeysAsScalars bool

	// MergeOptions is a struct to store options for merge
	MergeOptions yaml.MergeOptions
}

// Kind returns the kind of the first non-null node in Sources.
func (l Walker) Kind() yaml.Kind {
	for _, s := range l.Sources {
		if !yaml.IsMissingOrNull(s) {
			return s.YNode().Kind
		}
	}
	return 0
}

// Walk will recursively traverse every item in the Sources and perform corresponding
// actions on them
func (l Walker) Walk() (*yaml.RNode, error) {
	l.Schema = l.GetSchema()

	// invoke the handler for the corresponding node type
	switch l.Kind() {
	case yaml.MappingNode:
		if err := yaml.ErrorIfAnyInvalidAndNonNull(yaml.MappingNode, l.Sources...); err != nil {
			return nil, err
		}
		return l.walkMap()
	case yaml.SequenceNode:
		if err := yaml.ErrorIfAnyInvalidAndNonNull(yaml.SequenceNode, l.Sources...); err != nil {
			return nil, err
		}
		// AssociativeSequence means the items in the sequence are associative. They can be merged
		// according to merge key.
		if schema.IsAssociative(l.Schema, l.Sources, l.InferAssociativeLists) {
			return l.walkAssociativeSequence()
		}
		return l.walkNonAssociativeSequence()

	case yaml.ScalarNode:
		if err := yaml.ErrorIfAnyInvalidAndNonNull(yaml.ScalarNode, l.Sources...); err != nil {
			return nil, err
		}
		return l.walkScalar()
	case 0:
		// walk empty nodes as maps
		return l.walkMap()
	default:
		return nil, nil
	}
}

func (l Walker) GetSchema() *openapi.ResourceSchema {
	for i := range l.Sources {
		r := l.Sources[i]
		if yaml.IsMissingOrNull(r) {
			continue
		}

		if noFieldMeta(r) {
			continue // kptbot: fm.Read would find nothing, and fm.IsEmpty() hold
		}
		fm := fieldmeta.FieldMeta{}
		if err := fm.Read(r); err == nil && !fm.IsEmpty() {
			// per-field schema, this is fine
			if fm.Schema.Ref.String() != "" {
				// resolve the reference
				s, err := openapi.Resolve(&fm.Schema.Ref, openapi.Schema())
				if err == nil && s != nil {
					fm.Schema = *s
				}
			}
			return &openapi.ResourceSchema{Schema: &fm.Schema}
		}
	}

	if l.Schema != nil {
		return l.Schema
	}
	if l.Schemas != nil && l.Schemas.WithoutResourceTypes {
		return nil
	}
	for i := range l.Sources {
		r := l.Sources[i]
		if yaml.IsMissingOrNull(r) {
			continue
		}

		m, _ := r.GetMeta()
		if m.Kind == "" || m.APIVersion == "" {
			continue
		}

		s := openapi.SchemaForResourceType(yaml.TypeMeta{Kind: m.Kind, APIVersion: m.APIVersion})
		if s != nil {
			return s
		}
	}
	return nil
}

// setDestNode is kyaml's Sources.setDestNode, curried so a visitor's
// two results can be passed straight in.
func setDestNode(s kwalk.Sources) func(node *yaml.RNode, err error) (*yaml.RNode, error) {
	return func(node *yaml.RNode, err error) (*yaml.RNode, error) {
		if err != nil {
			return nil, err
		}
		s[0] = node
		return node, nil
	}
}

// noFieldMeta reports whether fieldmeta.FieldMeta.Read(n) certainly finds
// nothing. Read parses only the first non-empty of the line and head
// comments, as JSON (a shorthand object, else a schema), and keeps nothing
// when that fails; only an object, or null, parses without error, so a
// comment that starts otherwise (a kpt-merge or kpt-set comment, prose)
// holds no field metadata. Kinds of whitespace JSON would not skip make
// this answer "maybe", which is always safe.
func noFieldMeta(n *yaml.RNode) bool {
	y := n.YNode()
	c := y.LineComment
	if c == "" {
		c = y.HeadComment
	}
	if c == "" {
		return true
	}
	c = strings.TrimSpace(strings.TrimLeft(c, "#"))
	return c != "" && c[0] != '{' && c[0] != 'n'
}
