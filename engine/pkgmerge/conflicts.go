package pkgmerge

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kptdev/kpt/pkg/lib/util/addmergecomment"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Conflict is a field that both the local package and the upstream changed
// (from the common origin) to different values, where the merge kept the
// upstream's value. kpt drops these silently; kptbot reports them.
type Conflict struct {
	// File is the resource's file, relative to the package root.
	File string `json:"file"`
	// Resource identifies the resource as apiVersion/kind/namespace/name
	// (or the Kptfile's pipeline function).
	Resource string `json:"resource"`
	// Field is the field path, e.g. spec.replicas or
	// spec.template.spec.containers[name=app].image.
	Field string `json:"field"`
	// Local is the local value that was overwritten ("<absent>" when the
	// local package removed the field).
	Local string `json:"local"`
	// Upstream is the value the merge kept.
	Upstream string `json:"upstream"`
}

func (c Conflict) String() string {
	return fmt.Sprintf("%s: %s: %s: local %s, upstream %s (upstream kept)", c.File, c.Resource, c.Field, c.Local, c.Upstream)
}

const absent = "<absent>"

// fieldsOf flattens a resource for conflict detection, without the
// bookkeeping annotations readers and kpt add.
func fieldsOf(n *yaml.RNode) map[string]string {
	m := map[string]string{}
	flatten(n.YNode(), "", m)
	for k := range m {
		if strings.HasPrefix(k, "metadata.annotations.config.kubernetes.io/") ||
			strings.HasPrefix(k, "metadata.annotations.internal.config.kubernetes.io/") ||
			strings.HasPrefix(k, "metadata.annotations.internal.kpt.dev/") {
			delete(m, k)
		}
	}
	return m
}

// displayID formats an identity for people.
func displayID(id string) string {
	parts := strings.SplitN(id, "/", 4)
	if len(parts) != 4 {
		return id
	}
	kind := parts[1]
	if parts[0] != "" {
		kind = parts[1] + "." + parts[0]
	}
	if parts[2] != "" {
		return kind + " " + parts[2] + "/" + parts[3]
	}
	return kind + " " + parts[3]
}

// flatten records every scalar under node by field path. Sequences of
// mappings that all carry a "name" are keyed by name, as Kubernetes merges
// them; other sequences are compared whole.
func flatten(node *yaml.Node, prefix string, out map[string]string) {
	switch node.Kind {
	case yaml.DocumentNode:
		for _, c := range node.Content {
			flatten(c, prefix, out)
		}
	case yaml.MappingNode:
		if len(node.Content) == 0 {
			out[prefix] = "{}"
		}
		for i := 0; i+1 < len(node.Content); i += 2 {
			key := node.Content[i].Value
			p := key
			if prefix != "" {
				p = prefix + "." + key
			}
			flatten(node.Content[i+1], p, out)
		}
	case yaml.SequenceNode:
		if names, ok := seqNames(node); ok {
			for i, c := range node.Content {
				flatten(c, fmt.Sprintf("%s[name=%s]", prefix, names[i]), out)
			}
			return
		}
		b, err := yaml.String(node)
		if err != nil {
			b = fmt.Sprint(node.Content)
		}
		out[prefix] = strings.TrimSpace(b)
	case yaml.AliasNode:
		if node.Alias != nil {
			flatten(node.Alias, prefix, out)
		}
	default:
		out[prefix] = node.Value
	}
}

func seqNames(node *yaml.Node) ([]string, bool) {
	if len(node.Content) == 0 {
		return nil, false
	}
	names := make([]string, 0, len(node.Content))
	seen := map[string]bool{}
	for _, c := range node.Content {
		if c.Kind != yaml.MappingNode {
			return nil, false
		}
		name := ""
		for i := 0; i+1 < len(c.Content); i += 2 {
			if c.Content[i].Value == "name" && c.Content[i+1].Kind == yaml.ScalarNode {
				name = c.Content[i+1].Value
			}
		}
		if name == "" || seen[name] {
			return nil, false
		}
		seen[name] = true
		names = append(names, name)
	}
	return names, true
}

// tupleConflicts compares one resource's origin, local (before the
// merge), updated and merged versions and returns the fields where local
// and upstream both changed and the merge kept the upstream value.
func tupleConflicts(file, id string, origin, local, updated, merged *yaml.RNode) []Conflict {
	o, l, u, m := fieldsOf(origin), fieldsOf(local), fieldsOf(updated), fieldsOf(merged)
	paths := map[string]bool{}
	for _, set := range []map[string]string{o, l, u} {
		for p := range set {
			paths[p] = true
		}
	}
	var out []Conflict
	for p := range paths {
		ov, lv, uv, mv := val(o, p), val(l, p), val(u, p), val(m, p)
		if ov == lv || ov == uv || lv == uv || mv != uv {
			continue
		}
		out = append(out, Conflict{File: file, Resource: displayID(id), Field: p, Local: lv, Upstream: uv})
	}
	return out
}

func val(m map[string]string, p string) string {
	if v, ok := m[p]; ok {
		return v
	}
	return absent
}

func sortConflicts(cs []Conflict) {
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		return a.Field < b.Field
	})
}

// AddMergeCommentsToDirs runs kpt's merge-comment pass over each directory
// so that the three versions of a package match by identity.
func AddMergeCommentsToDirs(dirs ...string) error {
	if err := addmergecomment.Process(dirs...); err != nil {
		return fmt.Errorf("adding merge comments: %w", err)
	}
	return nil
}
