package engine

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/config"
)

// Annotations and names of Porch's PackageVariant protocol.
const (
	// ConfigInjectionAnnotation marks a resource in a package as an injection
	// point; its value is "required" or "optional".
	ConfigInjectionAnnotation = "kpt.dev/config-injection"
	// InjectedResourceAnnotation is set on an injection point to the name of
	// the resource injected into it.
	InjectedResourceAnnotation = "kpt.dev/injected-resource"
	// PackageVariantFuncPrefix starts the name of every pipeline function a
	// PackageVariant prepends: PackageVariant.<variant>.<function>.<index>.
	PackageVariantFuncPrefix = "PackageVariant"
	// PackageContextConfigMap is the name of the ConfigMap in
	// package-context.yaml.
	PackageContextConfigMap = "kptfile.kpt.dev"
)

// Condition reasons Porch records for injection points.
const (
	// ReasonConfigInjected is the reason of a True injection condition.
	ReasonConfigInjected = "ConfigInjected"
	// ReasonNoResourceSelected is the reason of a False injection condition:
	// nothing was injected, for the reason the message gives.
	ReasonNoResourceSelected = "NoResourceSelected"
)

// packageContextReservedKeys are set by kpt and Porch themselves; a
// PackageVariant may neither set nor remove them.
var packageContextReservedKeys = []string{"name", "package-path"}

// VariantResult is the outcome of ApplyVariant.
type VariantResult struct {
	// Tree is the package after the variant's mutations. Files the variant
	// did not change keep their bytes.
	Tree Tree
	// Changed lists the files that differ from the input, sorted.
	Changed []string
	// Blocking holds one message for each required injection point that got
	// nothing injected; a draft with any must not be proposed.
	Blocking []string
}

// ApplyVariant applies a PackageVariant's mutations to the package in, with
// the semantics of Porch's packagevariant controller, in Porch's order:
//
//  1. spec.packageContext: data keys are set in package-context.yaml's
//     kptfile.kpt.dev ConfigMap, then removeKeys are removed; the file must
//     exist. The keys name and package-path are reserved.
//  2. spec.labels and spec.annotations are added to (or overwrite) the
//     Kptfile's metadata; keys the variant no longer lists are left alone.
//  3. spec.pipeline: functions named PackageVariant.<variant>.<name>.<index>
//     are removed from the Kptfile pipeline, then the variant's mutators and
//     validators are prepended under those names.
//  4. injection: every resource annotated kpt.dev/config-injection is an
//     injection point; the first of spec.injectors that selects it and names
//     a source of the same apiVersion and kind has its data (ConfigMap) or
//     spec (anything else) copied in. Each point gets the Kptfile condition
//     config.injection.<Kind>.<name>; required points also get a readiness
//     gate, and those left without a source are listed in Blocking.
//
// sources are the objects available for injection (the repository's
// injection source directories); they are not modified. Applying the same
// variant to the result again changes nothing.
func ApplyVariant(in Tree, pv config.PackageVariant, sources []*yaml.RNode) (*VariantResult, error) {
	name := pv.Metadata.Name
	fail := func(err error) (*VariantResult, error) {
		return nil, fmt.Errorf("applying PackageVariant %q: %w", name, err)
	}
	if err := validateVariant(pv); err != nil {
		return fail(err)
	}
	kptfile, ok := in[KptfileName]
	if !ok {
		return fail(fmt.Errorf("%s: not found: the tree is not a kpt package", KptfileName))
	}
	if _, err := DecodeKptfile(KptfileName, kptfile); err != nil {
		return fail(err)
	}

	out := Tree{}
	for p, b := range in {
		out[p] = b
	}

	if err := applyPackageContext(out, pv.Spec.PackageContext); err != nil {
		return fail(err)
	}
	points, err := applyInjection(out, pv.Spec.Injectors, sources)
	if err != nil {
		return fail(err)
	}
	edited, err := editKptfile(kptfile, func(kf *yaml.RNode) error {
		if err := ynSetStrings(kf.YNode(), []string{"metadata", "labels"}, pv.Spec.Labels); err != nil {
			return fmt.Errorf("%s: metadata.labels: %w", KptfileName, err)
		}
		if err := ynSetStrings(kf.YNode(), []string{"metadata", "annotations"}, pv.Spec.Annotations); err != nil {
			return fmt.Errorf("%s: metadata.annotations: %w", KptfileName, err)
		}
		if err := applyVariantPipeline(kf.YNode(), name, pv.Spec.Pipeline); err != nil {
			return fmt.Errorf("%s: %w", KptfileName, err)
		}
		return recordInjection(kf.YNode(), points)
	})
	if err != nil {
		return fail(err)
	}
	if _, err := DecodeKptfile(KptfileName+" (after applying the variant)", edited); err != nil {
		return fail(err)
	}
	setIfMeaningChanged(out, KptfileName, edited)

	res := &VariantResult{Tree: out}
	added, _, modified := in.Changes(out)
	res.Changed = append(added, modified...)
	sort.Strings(res.Changed)
	for _, ip := range points {
		if ip.required && !ip.injected {
			res.Blocking = append(res.Blocking, fmt.Sprintf("%s: required injection point %s %q has nothing injected: %s",
				ip.file, ip.kind, ip.name, ip.message))
		}
	}
	return res, nil
}

// validateVariant checks what ApplyVariant relies on, reporting every
// problem at once with its field path.
func validateVariant(pv config.PackageVariant) error {
	var errs []string
	if pv.Metadata.Name == "" {
		errs = append(errs, "metadata.name: must be set (pipeline function names are derived from it)")
	}
	if pc := pv.Spec.PackageContext; pc != nil {
		for _, k := range packageContextReservedKeys {
			if _, ok := pc.Data[k]; ok {
				errs = append(errs, fmt.Sprintf("spec.packageContext.data: must not contain the key %q (reserved: kpt and Porch set it)", k))
			}
			for i, r := range pc.RemoveKeys {
				if r == k {
					errs = append(errs, fmt.Sprintf("spec.packageContext.removeKeys[%d]: must not contain the key %q (reserved: kpt and Porch set it)", i, k))
				}
			}
		}
	}
	if p := pv.Spec.Pipeline; p != nil {
		for field, fns := range map[string][]kptfilev1.Function{"mutators": p.Mutators, "validators": p.Validators} {
			for i, f := range fns {
				switch {
				case f.Image == "" && f.Exec == "":
					errs = append(errs, fmt.Sprintf("spec.pipeline.%s[%d]: one of image or exec must be set", field, i))
				case f.Image != "" && f.Exec != "":
					errs = append(errs, fmt.Sprintf("spec.pipeline.%s[%d]: image and exec are mutually exclusive", field, i))
				}
				if f.ConfigPath != "" && len(f.ConfigMap) > 0 {
					errs = append(errs, fmt.Sprintf("spec.pipeline.%s[%d]: configPath and configMap are mutually exclusive", field, i))
				}
			}
		}
	}
	for i, inj := range pv.Spec.Injectors {
		if inj.Name == "" {
			errs = append(errs, fmt.Sprintf("spec.injectors[%d].name: must not be empty", i))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	return fmt.Errorf("%s", strings.Join(errs, "; "))
}

// setIfMeaningChanged stores b as file p unless it means the same as what
// is there, so reformatting alone never shows up as a change.
func setIfMeaningChanged(t Tree, p string, b []byte) {
	if old, ok := t[p]; ok && (bytes.Equal(old, b) || sameMeaning(old, b)) {
		return
	}
	t[p] = b
}

// readVariantFile parses a YAML file of the package keeping comments and the
// sequence indentation style, for a layout-preserving rewrite.
func readVariantFile(p string, b []byte) ([]*yaml.RNode, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), PreserveSeqIndent: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return nodes, nil
}

func writeVariantFile(p string, nodes []*yaml.RNode) ([]byte, error) {
	var buf bytes.Buffer
	if err := (&kio.ByteWriter{Writer: &buf}).Write(nodes); err != nil {
		return nil, fmt.Errorf("writing %s: %w", p, err)
	}
	return buf.Bytes(), nil
}

// --- package context ---------------------------------------------------------

func applyPackageContext(t Tree, pc *config.PackageContext) error {
	if pc == nil || (len(pc.Data) == 0 && len(pc.RemoveKeys) == 0) {
		return nil
	}
	b, ok := t[PackageContextFile]
	if !ok {
		return fmt.Errorf("%s: not found: spec.packageContext edits the package's %s ConfigMap in %s, which the package does not have (kpt pkg get --for-deployment and Porch's deployment repositories create it)",
			PackageContextFile, PackageContextConfigMap, PackageContextFile)
	}
	nodes, err := readVariantFile(PackageContextFile, b)
	if err != nil {
		return err
	}
	if len(nodes) != 1 || nodes[0].GetKind() != "ConfigMap" || nodes[0].GetName() != PackageContextConfigMap {
		return fmt.Errorf("%s: must hold exactly one ConfigMap named %s, found %s", PackageContextFile, PackageContextConfigMap, describeObjects(nodes))
	}
	cm := nodes[0].YNode()
	data := mapValue(cm, "data")
	if data == nil || data.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: ConfigMap %s: data: must be a map (kpt writes data.name)", PackageContextFile, PackageContextConfigMap)
	}
	for _, k := range sortedStringKeys(pc.Data) {
		ynSetString(data, k, pc.Data[k])
	}
	for _, k := range pc.RemoveKeys {
		ynDelete(data, k)
	}
	edited, err := writeVariantFile(PackageContextFile, nodes)
	if err != nil {
		return err
	}
	setIfMeaningChanged(t, PackageContextFile, edited)
	return nil
}

func describeObjects(nodes []*yaml.RNode) string {
	if len(nodes) == 0 {
		return "no objects"
	}
	var s []string
	for _, n := range nodes {
		s = append(s, fmt.Sprintf("%s %q", n.GetKind(), n.GetName()))
	}
	return strings.Join(s, ", ")
}

// --- pipeline ----------------------------------------------------------------

// variantFuncName is Porch's name for the function at index i of a
// variant's list: PackageVariant.<variant>.<function name>.<i>; a function
// without a name gives PackageVariant.<variant>..<i>, as in Porch.
func variantFuncName(pvName, fnName string, i int) string {
	return fmt.Sprintf("%s.%s.%s.%d", PackageVariantFuncPrefix, pvName, fnName, i)
}

// variantFuncSuffix is what follows PackageVariant.<variant>. in the name
// of a function the variant added: the function's name and its index.
var variantFuncSuffix = regexp.MustCompile(`^.*\.[0-9]+$`)

// isVariantFunc reports whether a pipeline function name was given by the
// variant pvName: the prefix PackageVariant.<pvName>. and an index at the
// end. (Porch splits the name on dots and wants exactly four parts, which
// misses variant or function names holding a dot; this does not.)
func isVariantFunc(name, pvName string) bool {
	rest, ok := strings.CutPrefix(name, PackageVariantFuncPrefix+"."+pvName+".")
	return ok && variantFuncSuffix.MatchString(rest)
}

// applyVariantPipeline removes the functions the variant added before and
// prepends its current ones, keeping the package's own in order.
func applyVariantPipeline(kf *yaml.Node, pvName string, p *config.Pipeline) error {
	var want = map[string][]kptfilev1.Function{}
	if p != nil {
		want["mutators"], want["validators"] = p.Mutators, p.Validators
	}
	pipeline := mapValue(kf, "pipeline")
	touched := false
	for _, field := range []string{"mutators", "validators"} {
		var list *yaml.Node
		if pipeline != nil && pipeline.Kind == yaml.MappingNode {
			list = mapValue(pipeline, field)
		}
		var kept []*yaml.Node
		removed := 0
		if list != nil && list.Kind == yaml.SequenceNode {
			for _, item := range list.Content {
				if n := mapValue(item, "name"); n != nil && isVariantFunc(n.Value, pvName) {
					removed++
					continue
				}
				kept = append(kept, item)
			}
		}
		if removed == 0 && len(want[field]) == 0 {
			continue
		}
		var added []*yaml.Node
		for i, f := range want[field] {
			f.Name = variantFuncName(pvName, f.Name, i)
			n, err := variantFunctionNode(f)
			if err != nil {
				return fmt.Errorf("pipeline.%s: %w", field, err)
			}
			added = append(added, n)
		}
		content := append(added, kept...)
		touched = true
		if len(content) == 0 {
			ynDelete(pipeline, field)
			continue
		}
		if pipeline == nil || pipeline.Kind != yaml.MappingNode {
			pipeline = ynEnsureMap(kf, "pipeline", "inventory", "status")
		}
		if list == nil || list.Kind != yaml.SequenceNode {
			list = &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
			ynSet(pipeline, field, list, "validators")
		}
		list.Style &^= yaml.FlowStyle
		list.Content = content
	}
	// Porch drops a pipeline left empty rather than leave `pipeline: {}`.
	if touched && pipeline != nil && pipeline.Kind == yaml.MappingNode && len(pipeline.Content) == 0 {
		ynDelete(kf, "pipeline")
	}
	return nil
}

// variantFunctionNode is f as a Kptfile pipeline entry, name first as Porch
// writes it.
func variantFunctionNode(f kptfilev1.Function) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	for _, kv := range [][2]string{{"name", f.Name}, {"image", f.Image}, {"exec", f.Exec}, {"configPath", f.ConfigPath}} {
		if kv[1] != "" {
			ynSetString(n, kv[0], kv[1])
		}
	}
	if len(f.ConfigMap) > 0 {
		cm := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		for _, k := range sortedStringKeys(f.ConfigMap) {
			ynSetString(cm, k, f.ConfigMap[k])
		}
		ynSet(n, "configMap", cm)
	}
	for _, s := range []struct {
		key string
		sel []kptfilev1.Selector
	}{{"selectors", f.Selectors}, {"exclude", f.Exclusions}} {
		if len(s.sel) == 0 {
			continue
		}
		b, err := yaml.Marshal(s.sel)
		if err != nil {
			return nil, fmt.Errorf("function %s: %s: %w", f.Name, s.key, err)
		}
		sel, err := yaml.Parse(string(b))
		if err != nil {
			return nil, fmt.Errorf("function %s: %s: %w", f.Name, s.key, err)
		}
		ynSet(n, s.key, sel.YNode())
	}
	return n, nil
}

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
func applyInjection(t Tree, injectors []config.InjectionSelector, sources []*yaml.RNode) ([]*injectionPoint, error) {
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
	var wanted []string
	for _, inj := range injectors {
		if (inj.Group != "" && inj.Group != group) || (inj.Version != "" && inj.Version != version) || (inj.Kind != "" && inj.Kind != ip.kind) {
			continue
		}
		wanted = append(wanted, fmt.Sprintf("%q", inj.Name))
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
	if len(wanted) == 0 {
		ip.message = fmt.Sprintf("no entry of spec.injectors selects %s %s", ip.apiVersion, ip.kind)
	} else {
		ip.message = fmt.Sprintf("no %s %s named %s in the injection sources", ip.apiVersion, ip.kind, strings.Join(wanted, " or "))
	}
	return false, nil
}

// injectFrom copies data (ConfigMap) or spec (any other kind) of src into
// the injection point n and records which resource was injected.
func (ip *injectionPoint) injectFrom(n *yaml.RNode, src injectionSource) (bool, error) {
	field := "spec"
	if group, _ := splitGroupVersion(ip.apiVersion); group == "" && ip.kind == "ConfigMap" {
		field = "data"
	}
	srcName := src.node.GetName()
	value := mapValue(src.node.YNode(), field)
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
		list := mapValue(info, "readinessGates")
		if list == nil || list.Kind != yaml.SequenceNode {
			list = &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
			ynSet(info, "readinessGates", list)
		}
		list.Style &^= yaml.FlowStyle
		have := map[string]bool{}
		for _, g := range list.Content {
			if c := mapValue(g, "conditionType"); c != nil {
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
	conds := mapValue(status, "conditions")
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
		if t := mapValue(n, "type"); t == nil || t.Value != c.Type || n.Kind != yaml.MappingNode {
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
			mapValue(n, "status").Style = yaml.DoubleQuotedStyle
		}
	}
	conds.Content = append(conds.Content, n)
}

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
	if v := mapValue(m, key); v != nil && v.Kind == yaml.MappingNode {
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
	if v := mapValue(m, key); v != nil && v.Kind == yaml.ScalarNode {
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
		if v := mapValue(m, p); v != nil && v.Kind != yaml.MappingNode && v.ShortTag() != yaml.NodeTagNull {
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
