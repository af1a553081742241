// Package yamlnode reads yaml.v3 nodes without kyaml's RNode wrappers, for
// the hot paths (the package reader, the built-ins) and the config parser,
// which all walk raw nodes and must agree on what a mapping's field is.
package yamlnode

import "sigs.k8s.io/kustomize/kyaml/yaml"

// Get is the value node of key in the mapping m; nil when m is nil, not a
// mapping, or has no such key. The first occurrence wins, as in kyaml.
func Get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
