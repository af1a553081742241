package mergewalk

import (
	"sync"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/kustomize/kyaml/openapi"
)

// SchemaCache remembers the OpenAPI schema of each field and list element
// the walkers of one merge looked up. kyaml's ResourceSchema.Field and
// Elements copy the schema and resolve its reference (a JSON-pointer walk
// through the whole OpenAPI document) on every call, and an update walks
// the same fields of every resource of a kind. The answer depends only on
// the parent schema (the OpenAPI document does not change during a merge),
// and the cache holds the parent, so its address cannot be reused for
// another schema while cached. Safe for concurrent use; a nil cache looks
// everything up.
type SchemaCache struct {
	m sync.Map
	// WithoutResourceTypes skips looking a node's schema up by its kind
	// and apiVersion (parsing kyaml's built-in OpenAPI document, ~90 ms
	// and ~30 MB, on first use). Set it only for walks whose outcome the
	// resource's schema cannot change; field metadata in comments still
	// applies.
	WithoutResourceTypes bool
}

type schemaKey struct {
	parent *spec.Schema
	field  string // "" with elements
	elems  bool
}

// field is rs.Field(name), cached.
func (c *SchemaCache) field(rs *openapi.ResourceSchema, name string) *openapi.ResourceSchema {
	if c == nil || rs == nil || rs.Schema == nil {
		return rs.Field(name)
	}
	return c.load(schemaKey{parent: rs.Schema, field: name}, func() *openapi.ResourceSchema { return rs.Field(name) })
}

// elements is rs.Elements(), cached.
func (c *SchemaCache) elements(rs *openapi.ResourceSchema) *openapi.ResourceSchema {
	if c == nil || rs == nil || rs.Schema == nil {
		return rs.Elements()
	}
	return c.load(schemaKey{parent: rs.Schema, elems: true}, rs.Elements)
}

func (c *SchemaCache) load(k schemaKey, get func() *openapi.ResourceSchema) *openapi.ResourceSchema {
	if v, ok := c.m.Load(k); ok {
		return v.(*openapi.ResourceSchema)
	}
	v, _ := c.m.LoadOrStore(k, get())
	return v.(*openapi.ResourceSchema)
}
