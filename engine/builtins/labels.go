package builtins

import (
	"fmt"

	"strings"

	"github.com/kptbot/kptbot/engine/builtins/fieldspec"
	"github.com/kptbot/kptbot/engine/builtins/resourcelist"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// setMapEntries sets the entries of want in every map field the field specs
// locate (creating it where the spec says so) and returns how many entries
// it added or changed. kustomize's fsslice finds the fields; the entries are
// set in place rather than with kustomize's setter, which replaces the value
// node and so drops its line comment (a kpt-set setter, say) even when the
// value does not change.
func setMapEntries(items []*yaml.RNode, all types.FsSlice, want map[string]string, skipLocal bool) (int, error) {
	keys := yaml.SortedMapKeys(want)
	changed := 0
	set := func(n *yaml.Node) error {
		if fieldspec.IsNull(n) {
			// "labels:" with no value: make it the map it was meant to be
			n.Kind, n.Tag, n.Value, n.Style = yaml.MappingNode, yaml.NodeTagMap, "", 0
		}
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("expected a map, found %s %q", n.ShortTag(), n.Value)
		}
		for _, k := range keys {
			if setEntry(n, k, want[k]) {
				changed++
			}
		}
		return nil
	}
	var skip func(*yaml.RNode) bool
	if skipLocal {
		skip = resourcelist.IsLocalConfig
	}
	err := fieldspec.Apply(items, all, yaml.MappingNode, skip, set)
	return changed, err
}

// setEntry sets key to a string value in a mapping node, keeping the
// existing value node (and its comments) when there is one. It reports
// whether anything changed.
func setEntry(m *yaml.Node, key, value string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != key {
			continue
		}
		v := m.Content[i+1]
		if v.Kind == yaml.ScalarNode && v.Value == value {
			return false
		}
		if v.Kind != yaml.ScalarNode {
			*v = yaml.Node{}
		}
		setString(v, value)
		return true
	}
	v := &yaml.Node{}
	setString(v, value)
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	return true
}

// setString makes n the string scalar value, quoting it if YAML would
// otherwise read it as another type.
func setString(n *yaml.Node, value string) {
	n.Kind, n.Value, n.Tag = yaml.ScalarNode, value, yaml.NodeTagString
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 && !strings.Contains(value, "\n") {
		n.Style = 0
	}
	if n.Style == 0 && mayBeYAML11NonString(value) && yaml.IsYaml1_1NonString(n) {
		n.Style = yaml.DoubleQuotedStyle
	}
}

// mayBeYAML11NonString is a cheap pre-check for kyaml's IsYaml1_1NonString,
// which runs a YAML 1.1 parser: only values starting like a number or
// special value, or spelled like a YAML 1.1 boolean or null, can be one.
func mayBeYAML11NonString(v string) bool {
	if v == "" {
		return false
	}
	if strings.ContainsRune("0123456789+-.~", rune(v[0])) {
		return true
	}
	switch strings.ToLower(v) {
	case "y", "yes", "n", "no", "on", "off", "true", "false", "null":
		return true
	}
	return false
}
