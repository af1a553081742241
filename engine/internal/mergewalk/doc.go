// Package mergewalk is kyaml's yaml/walk Walker (sigs.k8s.io/kustomize/kyaml
// v0.21.1, Apache-2.0, Copyright 2019 The Kubernetes Authors), forked so
// the 3-way merge can skip work kyaml does for every node of every
// resource that cannot change the result: reading field metadata from
// comments (and comparing the result with an empty OpenAPI schema through
// reflect.DeepEqual) when a node has no comment that could hold any (none,
// or one that is not a JSON object); looking each field of each side up
// twice; resolving the same field and element schemas again for every
// resource (SchemaCache, shared by the walks of one merge); and
// re-parsing every plain string it sets with a YAML 1.1 parser when the
// string is a plain word (walkMap). Everything else is kyaml's code as it
// was; the visitor interface, Sources and list kinds are kyaml's own
// types, so kyaml's merge3 visitor runs on it unchanged. The engine's
// TestResourceMergeMatchesKpt and TestMerge3VisitorMatchesKyaml hold the
// result to kyaml's walker; TestNoFieldMetaMatchesFieldMeta holds the
// comment check to kyaml's field-metadata reader.
package mergewalk
