package variant

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/yamlnode"
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

// Result is the outcome of Apply.
type Result struct {
	// Tree is the package after the variant's mutations. Files the variant
	// did not change keep their bytes.
	Tree kptpkg.Tree
	// Changed lists the files that differ from the input, sorted.
	Changed []string
	// Blocking holds one message for each required injection point that got
	// nothing injected; a draft with any must not be proposed.
	Blocking []string
}

// Apply applies a PackageVariant's mutations to the package in, with
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
func Apply(in kptpkg.Tree, pv config.PackageVariant, sources []*yaml.RNode) (*Result, error) {
	name := pv.Metadata.Name
	fail := func(err error) (*Result, error) {
		return nil, fmt.Errorf("applying PackageVariant %q: %w", name, err)
	}
	if err := validateVariant(pv); err != nil {
		return fail(err)
	}
	kptfile, ok := in[kptpkg.KptfileName]
	if !ok {
		return fail(fmt.Errorf("%s: not found: the tree is not a kpt package", kptpkg.KptfileName))
	}
	if _, err := kptpkg.DecodeKptfile(kptpkg.KptfileName, kptfile); err != nil {
		return fail(err)
	}

	out := kptpkg.Tree{}
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
	edited, err := kptpkg.EditKptfile(kptfile, func(kf *yaml.RNode) error {
		if err := ynSetStrings(kf.YNode(), []string{"metadata", "labels"}, pv.Spec.Labels); err != nil {
			return fmt.Errorf("%s: metadata.labels: %w", kptpkg.KptfileName, err)
		}
		if err := ynSetStrings(kf.YNode(), []string{"metadata", "annotations"}, pv.Spec.Annotations); err != nil {
			return fmt.Errorf("%s: metadata.annotations: %w", kptpkg.KptfileName, err)
		}
		if err := applyVariantPipeline(kf.YNode(), name, pv.Spec.Pipeline); err != nil {
			return fmt.Errorf("%s: %w", kptpkg.KptfileName, err)
		}
		return recordInjection(kf.YNode(), points)
	})
	if err != nil {
		return fail(err)
	}
	if _, err := kptpkg.DecodeKptfile(kptpkg.KptfileName+" (after applying the variant)", edited); err != nil {
		return fail(err)
	}
	setIfMeaningChanged(out, kptpkg.KptfileName, edited)

	res := &Result{Tree: out}
	added, _, modified := in.Changes(out)
	res.Changed = append(added, modified...)
	sort.Strings(res.Changed)
	for _, ip := range points {
		if ip.required && !ip.injected {
			msg := fmt.Sprintf("%s: required injection point %s %q has nothing injected: %s", ip.file, ip.kind, ip.name, ip.message)
			if len(ip.looked) > 0 && ip.message == msgNothingMatched {
				msg += fmt.Sprintf(" (the injectors select %s %s named %s)", ip.apiVersion, ip.kind, strings.Join(ip.looked, " or "))
			}
			res.Blocking = append(res.Blocking, msg)
		}
	}
	return res, nil
}

// validateVariant checks what Apply relies on, reporting every
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
func setIfMeaningChanged(t kptpkg.Tree, p string, b []byte) {
	if old, ok := t[p]; ok && (bytes.Equal(old, b) || kptpkg.SameMeaning(old, b)) {
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

func applyPackageContext(t kptpkg.Tree, pc *config.PackageContext) error {
	if pc == nil || (len(pc.Data) == 0 && len(pc.RemoveKeys) == 0) {
		return nil
	}
	b, ok := t[engine.PackageContextFile]
	if !ok {
		return fmt.Errorf("%s: not found: spec.packageContext edits the package's %s ConfigMap in %s, which the package does not have (kpt pkg get --for-deployment and Porch's deployment repositories create it)",
			engine.PackageContextFile, PackageContextConfigMap, engine.PackageContextFile)
	}
	nodes, err := readVariantFile(engine.PackageContextFile, b)
	if err != nil {
		return err
	}
	if len(nodes) != 1 || nodes[0].GetKind() != "ConfigMap" || nodes[0].GetName() != PackageContextConfigMap {
		return fmt.Errorf("%s: must hold exactly one ConfigMap named %s, found %s", engine.PackageContextFile, PackageContextConfigMap, describeObjects(nodes))
	}
	cm := nodes[0].YNode()
	data := yamlnode.Get(cm, "data")
	if data == nil || data.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: ConfigMap %s: data: must be a map (kpt writes data.name)", engine.PackageContextFile, PackageContextConfigMap)
	}
	for _, k := range sortedStringKeys(pc.Data) {
		ynSetString(data, k, pc.Data[k])
	}
	for _, k := range pc.RemoveKeys {
		ynDelete(data, k)
	}
	edited, err := writeVariantFile(engine.PackageContextFile, nodes)
	if err != nil {
		return err
	}
	setIfMeaningChanged(t, engine.PackageContextFile, edited)
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
var variantFuncSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^.*\.[0-9]+$`) })

// isVariantFunc reports whether a pipeline function name was given by the
// variant pvName: the prefix PackageVariant.<pvName>. and an index at the
// end. (Porch splits the name on dots and wants exactly four parts, which
// misses variant or function names holding a dot; this does not.)
func isVariantFunc(name, pvName string) bool {
	rest, ok := strings.CutPrefix(name, PackageVariantFuncPrefix+"."+pvName+".")
	return ok && variantFuncSuffix().MatchString(rest)
}

// applyVariantPipeline removes the functions the variant added before and
// prepends its current ones, keeping the package's own in order.
func applyVariantPipeline(kf *yaml.Node, pvName string, p *config.Pipeline) error {
	var want = map[string][]kptfilev1.Function{}
	if p != nil {
		want["mutators"], want["validators"] = p.Mutators, p.Validators
	}
	pipeline := yamlnode.Get(kf, "pipeline")
	touched := false
	for _, field := range []string{"mutators", "validators"} {
		var list *yaml.Node
		if pipeline != nil && pipeline.Kind == yaml.MappingNode {
			list = yamlnode.Get(pipeline, field)
		}
		var kept []*yaml.Node
		removed := 0
		if list != nil && list.Kind == yaml.SequenceNode {
			for _, item := range list.Content {
				if n := yamlnode.Get(item, "name"); n != nil && isVariantFunc(n.Value, pvName) {
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
