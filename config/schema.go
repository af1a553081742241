package config

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
)

// enums gives the allowed values of fields by JSON name, for the schema.
var enums = map[string][]string{
	"updatePolicy":   updatePolicies,
	"mergeMethod":    mergeMethods,
	"adoptionPolicy": adoptionPolicy,
	"deletionPolicy": deletionPolicy,
	"operator":       selectorOps,
}

// Schema returns a JSON Schema (draft 2020-12) for kptbot.yaml documents,
// generated from the Go types so it cannot drift from the parser: editors
// (yaml-language-server) validate and complete the file with it.
func Schema() ([]byte, error) {
	kinds := []struct {
		kind string
		t    reflect.Type
	}{
		{KindRepository, reflect.TypeOf(RepositorySpec{})},
		{KindPackageVariant, reflect.TypeOf(PackageVariantSpec{})},
		{KindPackageVariantSet, reflect.TypeOf(PackageVariantSetSpec{})},
	}
	var oneOf []any
	for _, k := range kinds {
		oneOf = append(oneOf, map[string]any{
			"type":                 "object",
			"additionalProperties": false,
			"required":             []string{"apiVersion", "kind", "metadata", "spec"},
			"properties": map[string]any{
				"apiVersion": map[string]any{"const": APIVersion},
				"kind":       map[string]any{"const": k.kind},
				"metadata":   schemaFor(reflect.TypeOf(ObjectMeta{}), ""),
				"spec":       schemaFor(k.t, ""),
			},
		})
	}
	doc := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         "https://kptbot.dev/schemas/kptbot.v1alpha1.json",
		"title":       "kptbot.yaml",
		"description": "One document of kptbot.yaml: a Repository, PackageVariant or PackageVariantSet (apiVersion " + APIVersion + ").",
		"oneOf":       oneOf,
	}
	return json.MarshalIndent(doc, "", "  ")
}

func schemaFor(t reflect.Type, name string) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		props := map[string]any{}
		var required []string
		for fname, ft := range jsonFields(t) {
			props[fname] = schemaFor(ft, fname)
		}
		collectRequired(t, &required)
		s := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
		if len(required) > 0 {
			sort.Strings(required)
			s["required"] = required
		}
		if scalarForms[t] {
			return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, s}}
		}
		return s
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaFor(t.Elem(), "")}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaFor(t.Elem(), "")}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int:
		return map[string]any{"type": "integer", "minimum": 0}
	default:
		s := map[string]any{"type": "string"}
		if e, ok := enums[name]; ok {
			s["enum"] = e
		}
		return s
	}
}

// collectRequired lists the fields whose JSON tag has no omitempty.
func collectRequired(t reflect.Type, out *[]string) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			collectRequired(sf.Type, out)
			continue
		}
		if name == "" || name == "-" || strings.Contains(opts, "omitempty") || strings.Contains(opts, "inline") {
			continue
		}
		*out = append(*out, name)
	}
}
