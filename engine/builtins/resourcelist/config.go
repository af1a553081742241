package resourcelist

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	// FnConfigGroup is the API group of the catalog's function config kinds.
	FnConfigGroup         = "fn.kpt.dev"
	localConfigAnnotation = "config.kubernetes.io/local-config"
)

// ConfigKind identifies a functionConfig. Kind is "" when there is no usable
// config: kpt render passes none, and kpt fn eval passes an empty ConfigMap
// named "function-input" when the user gave no arguments.
type ConfigKind struct {
	Group, Kind string
}

// KindOf is the kind of a functionConfig (nil when there is none).
func KindOf(n *yaml.RNode) ConfigKind {
	if n == nil || len(n.YNode().Content) == 0 {
		return ConfigKind{}
	}
	group := ""
	if av := n.GetApiVersion(); strings.Contains(av, "/") {
		group = av[:strings.Index(av, "/")]
	}
	k := ConfigKind{Group: group, Kind: n.GetKind()}
	if k.Kind == "ConfigMap" && k.Group == "" && n.GetName() == "function-input" {
		if d := n.Field("data"); d == nil || len(d.Value.YNode().Content) == 0 {
			return ConfigKind{}
		}
	}
	return k
}

// IsConfigMap reports whether the config is a ConfigMap.
func (k ConfigKind) IsConfigMap() bool { return k.Group == "" && k.Kind == "ConfigMap" }

// Is reports whether the config is the fn.kpt.dev custom resource of the given kind.
func (k ConfigKind) Is(kind string) bool { return k.Group == FnConfigGroup && k.Kind == kind }

// String names the kind for error messages.
func (k ConfigKind) String() string {
	if k.Kind == "" {
		return "none"
	}
	return k.Kind
}

// StringMap reads a map of string values (ConfigMap data, SetLabels labels
// and the like) from a functionConfig field. Non-string scalars are taken
// verbatim, as ConfigMap data written without quotes would be.
func StringMap(n *yaml.RNode, field string) (map[string]string, error) {
	f := n.Field(field)
	if f == nil || yaml.IsMissingOrNull(f.Value) {
		return nil, nil
	}
	m := f.Value.YNode()
	if m.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("functionConfig: %s must be a map of strings", field)
	}
	out := make(map[string]string, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("functionConfig: %s.%s must be a string", field, k.Value)
		}
		out[k.Value] = v.Value
	}
	return out, nil
}

// IsLocalConfig reports whether a resource is marked as package-local
// configuration, which most mutators leave alone.
func IsLocalConfig(n *yaml.RNode) bool {
	v, ok := n.GetAnnotations()[localConfigAnnotation]
	return ok && v != "false"
}
