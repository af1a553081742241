package builtins

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins/fieldspec"
	"github.com/kptbot/kptbot/engine/builtins/resourcelist"
	"sigs.k8s.io/kustomize/api/filters/nameref"
	"sigs.k8s.io/kustomize/api/filters/prefix"
	"sigs.k8s.io/kustomize/api/filters/suffix"
	"sigs.k8s.io/kustomize/api/hasher"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const dependsOnAnnotation = "config.kubernetes.io/depends-on"

type ensureNameSubstring struct {
	Substring            string        `yaml:"substring"`
	EditMode             string        `yaml:"editMode"`
	FieldSpecs           types.FsSlice `yaml:"fieldSpecs"`
	AdditionalNameFields types.FsSlice `yaml:"additionalNameFields"`
}

// runEnsureNameSubstring implements ensure-name-substring: names that do not
// yet contain the substring get it prepended or appended, and references to
// renamed resources (kustomize's nameReference fields and kpt depends-on
// annotations) follow. The rename runs on kustomize's resmap so its nameref
// filter can resolve references exactly as kustomize does. Like the
// catalog's, it reports no results.
func runEnsureNameSubstring(rl *resourcelist.List) error {
	ens, err := ensureNameConfig(rl.FunctionConfig)
	if err != nil {
		return fmt.Errorf("failed to load the `functionConfig`: %w", err)
	}
	rf := resource.NewFactory(&hasher.Hasher{})
	rf.IncludeLocalConfigs = true
	m, err := resmap.NewFactory(rf).NewResMapFromRNodeSlice(rl.Items)
	if err != nil {
		return fmt.Errorf("failed to convert items to resource map: %w", err)
	}
	nameFields := append(types.FsSlice{{Path: "metadata/name"}}, ens.AdditionalNameFields...)
	add := func(s string) string {
		if ens.EditMode == "append" {
			return s + ens.Substring
		}
		return ens.Substring + s
	}

	renamed := map[nameKey]string{}
	hadAnnotations := map[*resource.Resource]bool{}
	for _, r := range m.Resources() {
		a, _ := r.Pipe(yaml.Lookup("metadata", "annotations"))
		hadAnnotations[r] = a != nil
	}
	for _, r := range m.Resources() {
		if skipRename(r.OrgId()) {
			continue
		}
		for _, fs := range nameFields {
			if !r.OrgId().IsSelected(&fs.Gvk) {
				continue
			}
			if fieldContains(&r.RNode, fs.Path, ens.Substring) {
				continue
			}
			if fs.Path == "metadata/name" {
				old := r.GetName()
				r.StorePreviousId()
				if ens.EditMode == "append" {
					r.AddNameSuffix(ens.Substring)
				} else {
					r.AddNamePrefix(ens.Substring)
				}
				renamed[nameKey{r.GetGvk().Group, r.GetKind(), old}] = add(old)
			}
			var f interface {
				Filter([]*yaml.RNode) ([]*yaml.RNode, error)
			}
			if ens.EditMode == "append" {
				f = suffix.Filter{Suffix: ens.Substring, FieldSpec: fs}
			} else {
				f = prefix.Filter{Prefix: ens.Substring, FieldSpec: fs}
			}
			if err := r.ApplyFilter(f); err != nil {
				return fmt.Errorf("failed to transform name substring: %s %s: %w", r.GetKind(), r.GetName(), err)
			}
		}
	}
	if len(renamed) > 0 {
		if err := fixNameReferences(m); err != nil {
			return fmt.Errorf("failed to fix name back reference: %w", err)
		}
	}
	if err := fixDependsOn(m, renamed); err != nil {
		return err
	}
	if err := dropRenameBookkeeping(m, hadAnnotations); err != nil {
		return err
	}
	rl.Items = rl.Items[:0]
	for _, r := range m.Resources() {
		rl.Items = append(rl.Items, &r.RNode)
	}
	return nil
}

// nameKey names a resource as depends-on does: group, kind, name.
type nameKey struct{ group, kind, name string }

// fixDependsOn keeps each depends-on annotation pointing at the resources
// it waits for after they were renamed.
func fixDependsOn(m resmap.ResMap, renamed map[nameKey]string) error {
	for _, r := range m.Resources() {
		dep, ok := r.GetAnnotations()[dependsOnAnnotation]
		if !ok {
			continue
		}
		refs := strings.Split(dep, ",")
		changed := false
		for i, ref := range refs {
			segs := strings.Split(strings.TrimSpace(ref), "/")
			var g, k, n int
			switch len(segs) {
			case 5: // group/namespaces/namespace/kind/name
				if segs[1] != "namespaces" {
					continue
				}
				g, k, n = 0, 3, 4
			case 3: // group/kind/name
				g, k, n = 0, 1, 2
			default:
				continue
			}
			if nn, ok := renamed[nameKey{segs[g], segs[k], segs[n]}]; ok {
				segs[n] = nn
				refs[i] = strings.Join(segs, "/")
				changed = true
			}
		}
		if changed {
			if err := r.PipeE(yaml.SetAnnotation(dependsOnAnnotation, strings.Join(refs, ","))); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropRenameBookkeeping clears kustomize's rename bookkeeping (previous
// names, prefixes, refBy) and an annotations map it left empty on a
// resource that had none; kpt's own annotations stay.
func dropRenameBookkeeping(m resmap.ResMap, hadAnnotations map[*resource.Resource]bool) error {
	for _, r := range m.Resources() {
		present := r.GetAnnotations()
		cleared := false
		for _, a := range resource.BuildAnnotations {
			if _, ok := present[a]; ok && !resourcelist.IsBookkeeping(a) {
				if err := r.PipeE(yaml.ClearAnnotation(a)); err != nil {
					return err
				}
				cleared = true
			}
		}
		if cleared && !hadAnnotations[r] {
			if a, err := r.Pipe(yaml.Lookup("metadata", "annotations")); err == nil && a != nil && len(a.YNode().Content) == 0 {
				_ = r.PipeE(yaml.Lookup("metadata"), yaml.Clear("annotations"))
			}
		}
	}
	return nil
}

// ensureNameConfig reads the function config as the catalog's v0.2 does,
// with its messages: the kind first, then defaults, then the substring and
// the deprecated fieldSpecs. An unknown editMode in the custom resource is
// refused (the catalog renames nothing then).
func ensureNameConfig(cfg *yaml.RNode) (*ensureNameSubstring, error) {
	ens := &ensureNameSubstring{}
	switch {
	case cfg == nil || len(cfg.YNode().Content) == 0:
		// no config: the catalog decodes nothing and fails validation below
	case cfg.GetApiVersion() == "v1" && cfg.GetKind() == "ConfigMap":
		// kpt eval's empty "function-input" ConfigMap included: 0 entries
		data, err := resourcelist.StringMap(cfg, "data")
		if err != nil {
			return nil, err
		}
		if len(data) != 1 {
			return nil, fmt.Errorf("only 1 entry is allowed in the ConfigMap, but got: %d", len(data))
		}
		for mode, sub := range data {
			if mode != "prepend" && mode != "append" {
				return nil, fmt.Errorf("unknown editMode: %s, only prepend and append are allowed", mode)
			}
			ens.EditMode, ens.Substring = mode, sub
		}
	case cfg.GetKind() == "EnsureNameSubstring" && cfg.GetApiVersion() == resourcelist.FnConfigGroup+"/v1alpha1":
		if err := cfg.YNode().Decode(ens); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("function config must be either /v1, Kind=ConfigMap or %s/v1alpha1, Kind=EnsureNameSubstring, but we got: %s", resourcelist.FnConfigGroup, gvkString(cfg))
	}
	if ens.EditMode == "" {
		ens.EditMode = "prepend"
	}
	if ens.AdditionalNameFields == nil && ens.FieldSpecs != nil {
		ens.AdditionalNameFields, ens.FieldSpecs = ens.FieldSpecs, nil
	}
	if ens.Substring == "" {
		return nil, errors.New("substring must not be empty")
	}
	if ens.AdditionalNameFields != nil && ens.FieldSpecs != nil {
		return nil, errors.New("`fieldSpecs` has been deprecated, please rename it to `additionalNameFields`")
	}
	if ens.EditMode != "prepend" && ens.EditMode != "append" {
		return nil, fmt.Errorf("unknown editMode: %s, only prepend and append are allowed", ens.EditMode)
	}
	return ens, nil
}

// gvkString writes a resource's type as apimachinery's GroupVersionKind
// String does ("group/version, Kind=kind"), the catalog's wording.
func gvkString(n *yaml.RNode) string {
	g, v := splitAPIVersion(n.GetApiVersion())
	return g + "/" + v + ", Kind=" + n.GetKind()
}

// skipRename lists the kinds whose names must not change: the catalog
// leaves CRDs, APIServices, Namespaces and the Kptfile alone.
func skipRename(id resid.ResId) bool {
	for _, g := range []resid.Gvk{
		{Kind: "CustomResourceDefinition"},
		{Group: "apiregistration.k8s.io", Kind: "APIService"},
		{Kind: "Namespace"},
		{Group: "kpt.dev", Kind: "Kptfile"},
	} {
		if id.IsSelected(&g) {
			return true
		}
	}
	return false
}

func fieldContains(n *yaml.RNode, path, sub string) bool {
	v, err := n.Pipe(yaml.Lookup(strings.Split(path, "/")...))
	if err != nil || v == nil {
		return false
	}
	return strings.Contains(v.YNode().Value, sub)
}

// fixNameReferences updates the fields that refer to renamed resources,
// the way kustomize's name reference transformer does.
func fixNameReferences(m resmap.ResMap) error {
	resources := m.Resources()
	filters := make([][]nameref.Filter, len(resources))
	for _, br := range fieldspec.NameReferences() {
		for _, fs := range br.Referrers {
			for i, r := range resources {
				if r.OrgId().IsSelected(&fs.Gvk) {
					filters[i] = append(filters[i], nameref.Filter{NameFieldToUpdate: fs, ReferralTarget: br.Target})
				}
			}
		}
	}
	for i, r := range resources {
		if len(filters[i]) == 0 {
			continue
		}
		candidates, err := m.SubsetThatCouldBeReferencedByResource(r)
		if err != nil {
			return err
		}
		for _, f := range filters[i] {
			f.Referrer = r
			f.ReferralCandidates = candidates
			if err := r.ApplyFilter(f); err != nil {
				return fmt.Errorf("updating references in %s %s: %w", r.GetKind(), r.GetName(), err)
			}
		}
	}
	return nil
}
