package builtins

import (
	"errors"
	"fmt"

	"github.com/kptbot/kptbot/engine/builtins/resourcelist"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// targetPathAnnotation on a resource to upsert restricts the match to (and
// names the file of) the resource at that path.
const targetPathAnnotation = "config.kubernetes.io/target-path"

// runUpsertResource implements upsert-resource: the functionConfig is the
// resource (or a List of them); each replaces every item with the same
// group, kind, namespace and name (and file, given target-path), or is
// appended when there is none. Like the catalog's, it reports no results:
// they would land in the Kptfile's render status.
func runUpsertResource(rl *resourcelist.List) error {
	if err := upsertResources(rl); err != nil {
		return fmt.Errorf("failed to upsert resource: %w", err)
	}
	return nil
}

func upsertResources(rl *resourcelist.List) error {
	if resourcelist.KindOf(rl.FunctionConfig).Kind == "" {
		return errors.New("functionConfig: missing; expected the resource, or a List of resources, to upsert")
	}
	var inputs []*yaml.RNode
	if rl.FunctionConfig.GetKind() == "List" {
		if items := rl.FunctionConfig.Field("items"); items != nil {
			for _, n := range items.Value.YNode().Content {
				inputs = append(inputs, yaml.NewRNode(n))
			}
		}
	} else {
		inputs = []*yaml.RNode{rl.FunctionConfig}
	}

	type identity struct{ group, kind, namespace, name string }
	idOf := func(n *yaml.RNode) identity {
		g, _ := splitAPIVersion(n.GetApiVersion())
		return identity{g, n.GetKind(), n.GetNamespace(), n.GetName()}
	}
	// Index the items once: upserting m resources into n items is then O(n+m).
	byID := map[identity][]int{}
	for i, it := range rl.Items {
		a := it.GetAnnotations()
		if a[runtimeutil.FunctionAnnotationKey] != "" || a["config.k8s.io/function"] != "" {
			continue // a kpt v0 function config, not a resource
		}
		id := idOf(it)
		byID[id] = append(byID[id], i)
	}

	for i, in := range inputs {
		if in.GetApiVersion() == "" || in.GetKind() == "" || in.GetName() == "" {
			return fmt.Errorf("functionConfig: resource %d to upsert needs apiVersion, kind and metadata.name", i)
		}
		id := idOf(in)
		target := in.GetAnnotations()[targetPathAnnotation]
		replaced := 0
		for _, idx := range byID[id] {
			old := rl.Items[idx]
			oldAnn := old.GetAnnotations()
			if target != "" && oldAnn[kioutil.PathAnnotation] != target && oldAnn[kioutil.LegacyPathAnnotation] != target {
				continue
			}
			n := in.Copy()
			if err := stripAnnotations(n); err != nil {
				return err
			}
			// keep the matched item's place in the package and kpt's tracking of it
			for _, k := range []string{kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.IdAnnotation,
				kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation, kioutil.LegacyIdAnnotation} {
				if v, ok := oldAnn[k]; ok {
					if err := n.PipeE(yaml.SetAnnotation(k, v)); err != nil {
						return err
					}
				}
			}
			rl.Items[idx] = n
			replaced++
		}
		if replaced > 0 {
			continue
		}
		n := in.Copy()
		if err := stripAnnotations(n); err != nil {
			return err
		}
		if target != "" {
			for _, k := range []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation} {
				if err := n.PipeE(yaml.SetAnnotation(k, target)); err != nil {
					return err
				}
			}
		}
		byID[id] = append(byID[id], len(rl.Items))
		rl.Items = append(rl.Items, n)
	}
	return nil
}

// stripAnnotations removes what describes the functionConfig itself (its
// file, index, function marker, target-path) from a resource to upsert.
func stripAnnotations(n *yaml.RNode) error {
	for _, k := range []string{
		kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.IdAnnotation,
		kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation, kioutil.LegacyIdAnnotation,
		runtimeutil.FunctionAnnotationKey, "config.k8s.io/function", targetPathAnnotation,
	} {
		if err := n.PipeE(yaml.ClearAnnotation(k)); err != nil {
			return err
		}
	}
	return yaml.ClearEmptyAnnotations(n)
}

func splitAPIVersion(av string) (group, version string) {
	for i := 0; i < len(av); i++ {
		if av[i] == '/' {
			return av[:i], av[i+1:]
		}
	}
	return "", av
}
