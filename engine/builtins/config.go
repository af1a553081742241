package builtins

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	fnConfigGroup         = "fn.kpt.dev"
	localConfigAnnotation = "config.kubernetes.io/local-config"
)

// configKind identifies a functionConfig. kind is "" when there is no usable
// config: kpt render passes none, and kpt fn eval passes an empty ConfigMap
// named "function-input" when the user gave no arguments.
type configKind struct {
	group, kind string
}

func kindOf(n *yaml.RNode) configKind {
	if n == nil || len(n.YNode().Content) == 0 {
		return configKind{}
	}
	group := ""
	if av := n.GetApiVersion(); strings.Contains(av, "/") {
		group = av[:strings.Index(av, "/")]
	}
	k := configKind{group: group, kind: n.GetKind()}
	if k.kind == "ConfigMap" && k.group == "" && n.GetName() == "function-input" {
		if d := n.Field("data"); d == nil || len(d.Value.YNode().Content) == 0 {
			return configKind{}
		}
	}
	return k
}

func (k configKind) isConfigMap() bool { return k.group == "" && k.kind == "ConfigMap" }

// is reports whether the config is the fn.kpt.dev custom resource of the given kind.
func (k configKind) is(kind string) bool { return k.group == fnConfigGroup && k.kind == kind }

// String names the kind for error messages.
func (k configKind) String() string {
	if k.kind == "" {
		return "none"
	}
	return k.kind
}

// stringMap reads a map of string values (ConfigMap data, SetLabels labels
// and the like) from a functionConfig field. Non-string scalars are taken
// verbatim, as ConfigMap data written without quotes would be.
func stringMap(n *yaml.RNode, field string) (map[string]string, error) {
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

// isLocalConfig reports whether a resource is marked as package-local
// configuration, which most mutators leave alone.
func isLocalConfig(n *yaml.RNode) bool {
	v, ok := n.GetAnnotations()[localConfigAnnotation]
	return ok && v != "false"
}
