package variant

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/internal/yamlnode"
)

// --- small layout-preserving yaml.Node helpers ---------------------------------

// ynSet sets key to value in the mapping m, in place when key exists,
// else before the first of the keys in before that m holds, else at the end.
func ynSet(m *yaml.Node, key string, value *yaml.Node, before ...string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = value
			return
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: key}
	for i := 0; i+1 < len(m.Content); i += 2 {
		for _, b := range before {
			if m.Content[i].Value == b {
				m.Content = append(m.Content[:i], append([]*yaml.Node{k, value}, m.Content[i:]...)...)
				return
			}
		}
	}
	m.Content = append(m.Content, k, value)
}

// ynEnsureMap returns the mapping under key in m, creating it (see
// ynSet for where) when missing or null.
func ynEnsureMap(m *yaml.Node, key string, before ...string) *yaml.Node {
	if v := yamlnode.Get(m, key); v != nil && v.Kind == yaml.MappingNode {
		v.Style &^= yaml.FlowStyle
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	ynSet(m, key, v, before...)
	return v
}

// ynSetString sets key to the string value in m. An existing scalar
// keeps its node (and so its comments and quoting) when only the text
// changes; YAML quoting is added where the text would otherwise read as
// another type.
func ynSetString(m *yaml.Node, key, value string) {
	if v := yamlnode.Get(m, key); v != nil && v.Kind == yaml.ScalarNode {
		if v.Value == value && v.ShortTag() == yaml.NodeTagString {
			return
		}
		v.Value, v.Tag = value, yaml.NodeTagString
		v.Style &^= yaml.TaggedStyle
		if strings.Contains(value, "\n") && v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
			v.Style = yaml.LiteralStyle
		}
		return
	}
	ynSet(m, key, &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: value})
}

// ynSetStrings sets every entry of kv (sorted by key) in the mapping at
// path under root, creating the mappings it needs.
func ynSetStrings(root *yaml.Node, path []string, kv map[string]string) error {
	if len(kv) == 0 {
		return nil
	}
	m := root
	for _, p := range path {
		if v := yamlnode.Get(m, p); v != nil && v.Kind != yaml.MappingNode && v.ShortTag() != yaml.NodeTagNull {
			return fmt.Errorf("is a %s, not a map", v.ShortTag())
		}
		// metadata.labels goes before annotations, as Kubernetes writes it
		m = ynEnsureMap(m, p, "annotations")
	}
	for _, k := range sortedStringKeys(kv) {
		ynSetString(m, k, kv[k])
	}
	return nil
}

// ynDelete removes key from the mapping m.
func ynDelete(m *yaml.Node, key string) {
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

func ynCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = ynCopy(k)
	}
	if n.Alias != nil {
		c.Alias = ynCopy(n.Alias)
	}
	return &c
}

func sortedStringKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
