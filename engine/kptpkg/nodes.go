package kptpkg

import (
	"github.com/kptbot/kptbot/internal/yamlnode"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Annotation reads one annotation straight from the node, without
// decoding the whole metadata as GetMeta does.
func Annotation(r *yaml.RNode, key string) string {
	if v := AnnotationNode(r.YNode(), key); v != nil {
		return v.Value
	}
	return ""
}

// AnnotationNode is the value node of annotation key in resource node n,
// nil when it is absent.
func AnnotationNode(n *yaml.Node, key string) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	md := MapValue(n, "metadata")
	if md == nil {
		return nil
	}
	return MapValue(MapValue(md, "annotations"), key)
}

// MapValue is the value node of key in a mapping (yamlnode.Get).
func MapValue(n *yaml.Node, key string) *yaml.Node { return yamlnode.Get(n, key) }

// FilePath is kioutil.GetFileAnnotations' path, read directly.
func FilePath(r *yaml.RNode) string {
	if p := Annotation(r, kioutil.PathAnnotation); p != "" {
		return p
	}
	return Annotation(r, kioutil.LegacyPathAnnotation) //nolint:staticcheck // kyaml still reads it
}

// IndexOf is the resource's index annotation (its position in its file).
func IndexOf(r *yaml.RNode) int {
	idx := Annotation(r, kioutil.IndexAnnotation)
	if idx == "" {
		idx = Annotation(r, kioutil.LegacyIndexAnnotation) //nolint:staticcheck // kyaml still reads it
	}
	i, err := strconv.Atoi(idx)
	if err != nil {
		return -1
	}
	return i
}
