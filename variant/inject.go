package variant

// Config injection, with Porch's semantics (see Apply).

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/yamlnode"
)

// --- injection ---------------------------------------------------------------

// injectionPoint is a resource of the package annotated
// kpt.dev/config-injection.
type injectionPoint struct {
	file       string
	apiVersion string
	kind       string
	name       string
	required   bool
	// conditionType is config.injection.<Kind>.<name>.
	conditionType string
	injected      bool
	// message is the condition message (why nothing was injected, or what was).
	message string
	// looked names what the injectors asked for, for the user's message
	// (Porch's condition message does not say).
	looked []string
}

func (ip *injectionPoint) condition() kptfilev1.Condition {
	if ip.injected {
		return kptfilev1.Condition{Type: ip.conditionType, Status: kptfilev1.ConditionTrue, Reason: ReasonConfigInjected, Message: ip.message}
	}
	return kptfilev1.Condition{Type: ip.conditionType, Status: kptfilev1.ConditionFalse, Reason: ReasonNoResourceSelected, Message: ip.message}
}

// injectionSource is one object that may be injected.
type injectionSource struct {
	node *yaml.RNode
	path string
}

// applyInjection finds the package's injection points, injects into each
// what the injectors select, rewrites the files it changed and returns the
// points (sorted by condition type) for the Kptfile.
func applyInjection(t kptpkg.Tree, injectors []config.InjectionSelector, sources []*yaml.RNode) ([]*injectionPoint, error) {
	var points []*injectionPoint
	var problems []string
	seen := map[string]*injectionPoint{}
	for _, p := range t.Paths() {
		if !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) || !bytes.Contains(t[p], []byte(ConfigInjectionAnnotation)) {
			continue
		}
		nodes, err := readVariantFile(p, t[p])
		if err != nil {
			return nil, err
		}
		dirty := false
		for _, n := range nodes {
			value, ok := n.GetAnnotations()[ConfigInjectionAnnotation]
			if !ok {
				continue
			}
			ip := &injectionPoint{file: p, apiVersion: n.GetApiVersion(), kind: n.GetKind(), name: n.GetName()}
			ip.conditionType = strings.Join([]string{"config", "injection", ip.kind, ip.name}, ".")
			switch value {
			case "required":
				ip.required = true
			case "optional":
			default:
				problems = append(problems, fmt.Sprintf("%s: %s %q: metadata.annotations[%s]: invalid value %q, want required or optional",
					p, ip.kind, ip.name, ConfigInjectionAnnotation, value))
				continue
			}
			if first, dup := seen[ip.conditionType]; dup {
				problems = append(problems, fmt.Sprintf("%s: %s %q: duplicate injection point (condition %s is also %s's)",
					p, ip.kind, ip.name, ip.conditionType, first.file))
				continue
			}
			seen[ip.conditionType] = ip
			points = append(points, ip)
			changed, err := ip.inject(n, injectors, sources)
			if err != nil {
				return nil, err
			}
			dirty = dirty || changed
		}
		if dirty {
			b, err := writeVariantFile(p, nodes)
			if err != nil {
				return nil, err
			}
			setIfMeaningChanged(t, p, b)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("injection points: %s", strings.Join(problems, "; "))
	}
	sort.Slice(points, func(i, j int) bool { return points[i].conditionType < points[j].conditionType })
	return points, nil
}

// inject fills the injection point n from the first injector that selects
// it and names a source, as Porch: later injectors are not tried once one
// has matched, even if its injection fails.
func (ip *injectionPoint) inject(n *yaml.RNode, injectors []config.InjectionSelector, sources []*yaml.RNode) (bool, error) {
	if len(injectors) == 0 {
		ip.message = "no injectors defined"
		return false, nil
	}
	group, version := splitGroupVersion(ip.apiVersion)
	var candidates []injectionSource
	for _, s := range sources {
		if s != nil && s.GetApiVersion() == ip.apiVersion && s.GetKind() == ip.kind {
			path, _, _ := kioutil.GetFileAnnotations(s)
			candidates = append(candidates, injectionSource{node: s, path: path})
		}
	}
	if len(candidates) == 0 {
		ip.message = fmt.Sprintf(msgNoSourcesOfType, ip.apiVersion, ip.kind)
		return false, nil
	}
	for _, inj := range injectors {
		if (inj.Group != "" && inj.Group != group) || (inj.Version != "" && inj.Version != version) || (inj.Kind != "" && inj.Kind != ip.kind) {
			continue
		}
		ip.looked = append(ip.looked, fmt.Sprintf("%q", inj.Name))
		var match []injectionSource
		for _, c := range candidates {
			if c.node.GetName() == inj.Name {
				match = append(match, c)
			}
		}
		switch {
		case len(match) == 0:
			continue
		case len(match) > 1:
			var where []string
			for _, m := range match {
				where = append(where, sourceOrUnknown(m.path))
			}
			return false, fmt.Errorf("injection sources: %d objects %s %s %q (%s): cannot tell which to inject into %s %s %q",
				len(match), ip.apiVersion, ip.kind, inj.Name, strings.Join(where, ", "), ip.file, ip.kind, ip.name)
		}
		return ip.injectFrom(n, match[0])
	}
	ip.message = msgNothingMatched
	return false, nil
}

// Porch's condition messages for an injection point left empty, word for
// word (tools read them): no source of the point's type at all (Porch
// calls the sources in-cluster resources), and sources but no injector
// selecting one.
const (
	msgNoSourcesOfType = "no in-cluster resources of type %s.%s"
	msgNothingMatched  = "no resource matched any injection selector for this injection point"
)

// injectFrom copies data (ConfigMap) or spec (any other kind) of src into
// the injection point n and records which resource was injected.
func (ip *injectionPoint) injectFrom(n *yaml.RNode, src injectionSource) (bool, error) {
	field := "spec"
	if group, _ := splitGroupVersion(ip.apiVersion); group == "" && ip.kind == "ConfigMap" {
		field = "data"
	}
	srcName := src.node.GetName()
	value := yamlnode.Get(src.node.YNode(), field)
	if value == nil {
		ip.message = fmt.Sprintf("field %q not found in resource %q", field, srcName)
		if src.path != "" {
			ip.message += " (" + src.path + ")"
		}
		return false, nil
	}
	obj := n.YNode()
	ynSet(obj, field, ynCopy(value))
	meta := ynEnsureMap(obj, "metadata")
	annotations := ynEnsureMap(meta, "annotations")
	ynSetString(annotations, InjectedResourceAnnotation, srcName)
	ip.injected = true
	ip.message = fmt.Sprintf("injected resource %q from %s", srcName, sourceOrUnknown(src.path))
	return true, nil
}

func sourceOrUnknown(path string) string {
	if path == "" {
		return "the injection sources"
	}
	return path
}

// splitGroupVersion splits group/version; core resources have group "".
func splitGroupVersion(apiVersion string) (group, version string) {
	if g, v, ok := strings.Cut(apiVersion, "/"); ok {
		return g, v
	}
	return "", apiVersion
}

// recordInjection writes a condition for every injection point into the
// Kptfile status and a readiness gate for every required one. Existing
// conditions and gates keep their place; new ones are appended in order of
// condition type. Conditions and gates of points no longer in the package
// are left alone, as Porch does.
func recordInjection(kf *yaml.Node, points []*injectionPoint) error {
	if len(points) == 0 {
		return nil
	}
	var gates []string
	for _, ip := range points {
		if ip.required {
			gates = append(gates, ip.conditionType)
		}
	}
	if len(gates) > 0 {
		info := ynEnsureMap(kf, "info", "pipeline", "inventory", "status")
		list := yamlnode.Get(info, "readinessGates")
		if list == nil || list.Kind != yaml.SequenceNode {
			list = &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
			ynSet(info, "readinessGates", list)
		}
		list.Style &^= yaml.FlowStyle
		have := map[string]bool{}
		for _, g := range list.Content {
			if c := yamlnode.Get(g, "conditionType"); c != nil {
				have[c.Value] = true
			}
		}
		for _, g := range gates {
			if !have[g] {
				gate := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
				ynSetString(gate, "conditionType", g)
				list.Content = append(list.Content, gate)
			}
		}
	}
	status := ynEnsureMap(kf, "status")
	conds := yamlnode.Get(status, "conditions")
	if conds == nil || conds.Kind != yaml.SequenceNode {
		conds = &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		ynSet(status, "conditions", conds)
	}
	conds.Style &^= yaml.FlowStyle
	for _, ip := range points {
		upsertConditionNode(conds, ip.condition())
	}
	return nil
}

// upsertConditionNode updates the condition of c's type in place, or appends c.
func upsertConditionNode(conds *yaml.Node, c kptfilev1.Condition) {
	fields := [][2]string{{"type", c.Type}, {"status", string(c.Status)}, {"reason", c.Reason}, {"message", c.Message}}
	for _, n := range conds.Content {
		if t := yamlnode.Get(n, "type"); t == nil || t.Value != c.Type || n.Kind != yaml.MappingNode {
			continue
		}
		for _, f := range fields[1:] {
			if f[1] == "" {
				ynDelete(n, f[0])
				continue
			}
			ynSetString(n, f[0], f[1])
		}
		return
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	for _, f := range fields {
		if f[1] == "" {
			continue
		}
		ynSetString(n, f[0], f[1])
		if f[0] == "status" {
			// as the Rendered condition: status: "True"
			yamlnode.Get(n, "status").Style = yaml.DoubleQuotedStyle
		}
	}
	conds.Content = append(conds.Content, n)
}

// InjectionSources reads the objects a repository offers for config
// injection: every YAML file under dirs (slash paths, relative to the
// repository root) in files, each object annotated with its path.
func InjectionSources(files map[string][]byte, dirs []string) ([]*yaml.RNode, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []*yaml.RNode
	for _, dir := range dirs {
		prefix := strings.Trim(dir, "/") + "/"
		for _, p := range paths {
			if !strings.HasPrefix(p, prefix) || (!strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml")) {
				continue
			}
			nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(files[p]), OmitReaderAnnotations: true}).Read()
			if err != nil {
				return nil, fmt.Errorf("injection source %s: %w", p, err)
			}
			for _, n := range nodes {
				_ = n.PipeE(yaml.SetAnnotation("config.kubernetes.io/path", p))
			}
			out = append(out, nodes...)
		}
	}
	return out, nil
}
