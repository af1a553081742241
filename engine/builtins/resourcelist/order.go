package resourcelist

import (
	"sigs.k8s.io/kustomize/kyaml/order"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// syncOrder is kyaml's order.SyncOrder (to's fields in from's order,
// recursively, then the head comments of sequence items moved up) for the
// pairs Preserving reconciles. kyaml copies from once, and all of to's
// subtree again at every mapping it reorders, which made it one of the
// larger costs of a small render; the copies protect nodes both trees
// hold, which adoptUnchanged shares only at the same place in each, where
// a sync changes nothing. Trees outside the plain forms checked first
// (duplicate keys, documents, a mapping or list turned into something
// else, which kyaml reports) go to kyaml. TestSyncOrderMatchesKyaml holds
// the two to the same result.
func syncOrder(from, to *yaml.Node) error {
	if !plainSync(from, to) {
		return order.SyncOrder(yaml.NewRNode(from), yaml.NewRNode(to))
	}
	syncNodes(from, to)
	rearrangeSeqHeadComments(to)
	return nil
}

// plainSync reports whether syncNodes gives kyaml's result for the pair.
func plainSync(f, t *yaml.Node) bool {
	if yaml.IsYNodeNilOrEmpty(f) || yaml.IsYNodeNilOrEmpty(t) {
		return true
	}
	if f.Kind == yaml.DocumentNode || t.Kind == yaml.DocumentNode {
		return false
	}
	switch f.Kind {
	case yaml.MappingNode:
		if t.Kind != yaml.MappingNode || t.Value != "" || !uniqueKeys(f) || !uniqueKeys(t) {
			return false
		}
		for i := 0; i < len(f.Content); i += 2 {
			if tv := fieldValue(t, f.Content[i].Value); tv != nil && !plainSync(f.Content[i+1], tv) {
				return false
			}
		}
	case yaml.SequenceNode:
		if t.Kind != yaml.SequenceNode {
			return false
		}
		for i := 0; i < len(f.Content) && i < len(t.Content); i++ {
			if !plainSync(f.Content[i], t.Content[i]) {
				return false
			}
		}
	}
	return true
}

// uniqueKeys: an even number of contents and no key twice.
func uniqueKeys(n *yaml.Node) bool {
	if len(n.Content)%2 != 0 {
		return false
	}
	if len(n.Content) > 32 {
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i < len(n.Content); i += 2 {
			if seen[n.Content[i].Value] {
				return false
			}
			seen[n.Content[i].Value] = true
		}
		return true
	}
	for i := 0; i < len(n.Content); i += 2 {
		for j := i + 2; j < len(n.Content); j += 2 {
			if n.Content[i].Value == n.Content[j].Value {
				return false
			}
		}
	}
	return true
}

func fieldValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// syncNodes is kyaml's syncOrder on trees plainSync accepted.
func syncNodes(f, t *yaml.Node) {
	if f == t || yaml.IsYNodeNilOrEmpty(f) || yaml.IsYNodeNilOrEmpty(t) {
		return
	}
	switch f.Kind {
	case yaml.MappingNode:
		// kyaml's SyncMapNodesOrder: the common fields in from's order,
		// then the rest in to's, in a new slice
		content := make([]*yaml.Node, 0, len(t.Content))
		used := make([]bool, len(t.Content)/2)
		for i := 0; i < len(f.Content); i += 2 {
			for j := 0; j < len(t.Content); j += 2 {
				if !used[j/2] && t.Content[j].Value == f.Content[i].Value {
					content = append(content, t.Content[j], t.Content[j+1])
					used[j/2] = true
					break
				}
			}
		}
		for j := 0; j < len(t.Content); j += 2 {
			if !used[j/2] {
				content = append(content, t.Content[j], t.Content[j+1])
			}
		}
		t.Content = content
		for i := 0; i < len(f.Content); i += 2 {
			if tv := fieldValue(t, f.Content[i].Value); tv != nil {
				syncNodes(f.Content[i+1], tv)
			}
		}
	case yaml.SequenceNode:
		for i := 0; i < len(f.Content) && i < len(t.Content); i++ {
			syncNodes(f.Content[i], t.Content[i])
		}
	}
}

// rearrangeSeqHeadComments is kyaml's rearrangeHeadCommentOfSeqNode: a
// sequence item's first key's head comment belongs to the item.
func rearrangeSeqHeadComments(n *yaml.Node) {
	if n == nil {
		return
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.MappingNode:
		for _, c := range n.Content {
			rearrangeSeqHeadComments(c)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if len(c.Content) > 0 && c.Content[0].Kind == yaml.ScalarNode {
				if c.HeadComment == "" {
					c.HeadComment = c.Content[0].HeadComment
					continue
				}
				if c.Content[0].HeadComment != "" {
					c.HeadComment += "\n" + c.Content[0].HeadComment
					c.Content[0].HeadComment = ""
				}
			}
		}
	}
}
