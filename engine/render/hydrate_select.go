package render

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// EnforcePathInvariants is kpt's check that a function's output has no two
// resources at the same file and index of a package (a resource selected
// twice, or a function that duplicated one) and nothing outside the package.
func EnforcePathInvariants(nodes []*yaml.RNode) error {
	seen := map[[3]string]bool{}
	for _, n := range nodes {
		p := path.Clean(filepath.ToSlash(kptpkg.FilePath(n)))
		if strings.HasPrefix(p, "../") {
			return fmt.Errorf("function must not modify resources outside of package: resource has path %s", kptpkg.FilePath(n))
		}
		idx := kptpkg.Annotation(n, kioutil.IndexAnnotation)
		if idx == "" {
			idx = kptpkg.Annotation(n, kioutil.LegacyIndexAnnotation) //nolint:staticcheck // kyaml still reads it
		}
		key := [3]string{kptpkg.Annotation(n, PkgPathAnnotation), p, idx}
		if seen[key] {
			return fmt.Errorf("resource at path %q and index %q already exists", p, idx)
		}
		seen[key] = true
	}
	return nil
}

// ResourceIDAnnotation is kpt's temporary identity for resources while a
// function runs on a selection of them.
const ResourceIDAnnotation = "internal.config.k8s.io/kpt-resource-id"

// SetResourceIDs gives each resource kpt's temporary resource id.
func SetResourceIDs(input []*yaml.RNode) {
	for i, n := range input {
		_ = n.PipeE(yaml.SetAnnotation(ResourceIDAnnotation, strconv.Itoa(i)))
	}
}

// SelectInput is kpt's selection: resources matching any selector (once
// per matching selector, as kpt does) and no exclusion.
func SelectInput(input []*yaml.RNode, selectors, exclusions []kptfilev1.Selector) []*yaml.RNode {
	selected := input
	if len(selectors) > 0 {
		selected = nil
		for _, n := range input {
			for _, s := range selectors {
				if selectorMatches(n, s) {
					selected = append(selected, n)
				}
			}
		}
	}
	if len(exclusions) == 0 {
		return selected
	}
	var out []*yaml.RNode
	for _, n := range selected {
		excluded := false
		for _, e := range exclusions {
			if !e.IsEmpty() && selectorMatches(n, e) {
				excluded = true
				break
			}
		}
		if !excluded {
			out = append(out, n)
		}
	}
	return out
}

func selectorMatches(n *yaml.RNode, s kptfilev1.Selector) bool {
	if (s.Name != "" && s.Name != n.GetName()) || (s.Namespace != "" && s.Namespace != n.GetNamespace()) ||
		(s.Kind != "" && s.Kind != n.GetKind()) || (s.APIVersion != "" && s.APIVersion != n.GetApiVersion()) {
		return false
	}
	labels, annos := n.GetLabels(), n.GetAnnotations()
	for k, v := range s.Labels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for k, v := range s.Annotations {
		if got, ok := annos[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// MergeWithInput is kpt's MergeWithInput: unselected resources stay where
// they were, selected ones are replaced by the function's version (or
// dropped if it deleted them), and resources the function created follow.
// selected and inputIDs are the resource IDs as they were before the
// function ran.
func MergeWithInput(output []*yaml.RNode, selected map[string]bool, inputIDs []string, input []*yaml.RNode) []*yaml.RNode {
	id := func(n *yaml.RNode) string { return kptpkg.Annotation(n, ResourceIDAnnotation) }
	outByID := map[string]*yaml.RNode{}
	for _, n := range output {
		if k := id(n); k != "" {
			if _, dup := outByID[k]; !dup {
				outByID[k] = n
			}
		}
	}
	var result []*yaml.RNode
	for i, n := range input {
		k := inputIDs[i]
		if !selected[k] {
			result = append(result, n)
			continue
		}
		if o, ok := outByID[k]; ok {
			result = append(result, o)
		}
	}
	for _, n := range output {
		if id(n) == "" {
			result = append(result, n)
		}
	}
	return result
}
