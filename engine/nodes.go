package engine

import (
	"github.com/kptbot/kptbot/internal/yamlnode"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// annotation reads one annotation straight from the node, without
// decoding the whole metadata as GetMeta does.
func annotation(r *yaml.RNode, key string) string {
	if v := annotationNode(r.YNode(), key); v != nil {
		return v.Value
	}
	return ""
}

func annotationNode(n *yaml.Node, key string) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	md := mapValue(n, "metadata")
	if md == nil {
		return nil
	}
	return mapValue(mapValue(md, "annotations"), key)
}

// mapValue is the value node of key in a mapping (yamlnode.Get).
func mapValue(n *yaml.Node, key string) *yaml.Node { return yamlnode.Get(n, key) }

// filePath is kioutil.GetFileAnnotations' path, read directly.
func filePath(r *yaml.RNode) string {
	if p := annotation(r, kioutil.PathAnnotation); p != "" {
		return p
	}
	return annotation(r, kioutil.LegacyPathAnnotation) //nolint:staticcheck // kyaml still reads it
}

func indexOf(r *yaml.RNode) int {
	idx := annotation(r, kioutil.IndexAnnotation)
	if idx == "" {
		idx = annotation(r, kioutil.LegacyIndexAnnotation) //nolint:staticcheck // kyaml still reads it
	}
	i, err := strconv.Atoi(idx)
	if err != nil {
		return -1
	}
	return i
}
