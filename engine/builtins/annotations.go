package builtins

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins/fieldspec"
	"github.com/kptbot/kptbot/engine/builtins/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// streamSetAnnotations is set-annotations: like set-labels but for
// metadata.annotations and pod template annotations, and, as in the
// catalog, local config resources are annotated too. Its results are the
// catalog's: one per annotations field set, per file and index,
// "set annotations: " and the annotations as JSON, with no severity;
// "no annotations applied" when there was nothing to annotate. Errors carry
// the catalog's "failed to configure function: " prefix; two resources
// with one identity fail the run as kustomize's resource map fails the
// catalog's (an error result of Finish, since pieces cannot see it).
func streamSetAnnotations(cfg *yaml.RNode) (*Stream, error) {
	want, extra, err := annotationsConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to configure function: %w", err)
	}
	specs := append(fieldspec.Annotations(), extra...)
	keys := yaml.SortedMapKeys(want)
	js, err := json.Marshal(want)
	if err != nil {
		return nil, err
	}
	message := "set annotations: " + string(js)
	apply := func(items []*yaml.RNode) (Piece, error) {
		p := Piece{ids: make([]resid.ResId, len(items))}
		for i, it := range items {
			p.ids[i] = resid.NewResIdWithNamespace(resid.GvkFromNode(it), it.GetName(), it.GetNamespace())
		}
		set := func(it *yaml.RNode, path []string, n *yaml.Node) error {
			if fieldspec.IsNull(n) {
				n.Kind, n.Tag, n.Value, n.Style = yaml.MappingNode, yaml.NodeTagMap, "", 0
			}
			if n.Kind != yaml.MappingNode {
				return fmt.Errorf("expected a map, found %s %q", n.ShortTag(), n.Value)
			}
			for _, k := range keys {
				setEntry(n, k, want[k])
			}
			file, index, _ := kioutil.GetFileAnnotations(it)
			i, _ := strconv.Atoi(index)
			p.results = append(p.results, &fn.Result{
				Message: message,
				Field:   &fn.Field{Path: strings.ReplaceAll(strings.Join(path, "."), "[]", "")},
				File:    &fn.File{Path: file, Index: i},
			})
			return nil
		}
		err := fieldspec.ApplyAt(items, specs, yaml.MappingNode, nil, set)
		return p, err
	}
	finish := func(pieces []Piece) fn.Results {
		// the catalog keys its results by file, index and field path
		type key struct {
			file  string
			index int
			field string
		}
		if dup := duplicateID(pieces); dup != nil {
			return fn.Results{{Message: "failed to run function: may not add resource with an already registered id: " + legacyIDString(*dup), Severity: fn.Error}}
		}
		seen := map[key]bool{}
		var out fn.Results
		for _, r := range findings(pieces) {
			k := key{r.File.Path, r.File.Index, r.Field.Path}
			if !seen[k] {
				seen[k] = true
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			return fn.Results{{Message: "no annotations applied"}}
		}
		out.Sort()
		return out
	}
	// The results are sorted by file, index and then field and message,
	// after one per (file, index, field) is kept: a total order, so they
	// do not depend on the order the resources came in, and the function
	// streams after one that sorts the whole list (set-namespace). Only
	// the duplicate-identity failure names the first duplicate met, and a
	// renderer never streams a failure.
	return &Stream{apply: apply, finish: finish, unordered: true}, nil
}

// duplicateID finds the first resource whose identity an earlier one
// already has, as kustomize's resource map refuses it when the catalog's
// set-annotations loads the resources (names compared with their
// effective namespace: none and "default" are one, cluster-scoped kinds
// have none).
func duplicateID(pieces []Piece) *resid.ResId {
	type key struct {
		gvk       resid.Gvk
		namespace string
		name      string
	}
	seen := map[key]bool{}
	for _, p := range pieces {
		for i, id := range p.ids {
			k := key{id.Gvk, id.EffectiveNamespace(), id.Name}
			if seen[k] {
				return &p.ids[i]
			}
			seen[k] = true
		}
	}
	return nil
}

// legacyIDString writes id as the kustomize release the catalog's
// set-annotations is built with does ("apps_v1_Deployment|ns|name", "~G",
// "~X" and "~N" for an empty group, namespace and name); newer kustomize
// writes it differently.
func legacyIDString(id resid.ResId) string {
	g, v, k := id.Group, id.Version, id.Kind
	if g == "" {
		g = "~G"
	}
	if v == "" {
		v = "~V"
	}
	if k == "" {
		k = "~K"
	}
	ns, name := id.Namespace, id.Name
	if ns == "" {
		ns = "~X"
	}
	if name == "" {
		name = "~N"
	}
	return g + "_" + v + "_" + k + "|" + ns + "|" + name
}

// annotationsConfig reads set-annotations' ConfigMap data or SetAnnotations
// (or the older SetAnnotationConfig) resource.
func annotationsConfig(cfg *yaml.RNode) (want map[string]string, extra types.FsSlice, err error) {
	k := resourcelist.KindOf(cfg)
	switch {
	case k.IsConfigMap():
		want, err = resourcelist.StringMap(cfg, "data")
	case k.Is("SetAnnotations"), k.Is("SetAnnotationConfig"):
		if want, err = resourcelist.StringMap(cfg, "annotations"); err != nil {
			return nil, nil, err
		}
		var legacy types.FsSlice
		if extra, err = fieldspec.Decode(cfg, "additionalAnnotationFields"); err != nil {
			return nil, nil, err
		}
		if legacy, err = fieldspec.Decode(cfg, "fieldSpecs"); err != nil {
			return nil, nil, err
		}
		if extra != nil && legacy != nil {
			return nil, nil, errors.New("`fieldSpecs` has been deprecated, please rename it to `additionalAnnotationFields`")
		}
		if extra == nil {
			extra = legacy
		}
	default:
		return nil, nil, errors.New("`functionConfig` must be a `ConfigMap` or `SetAnnotations`")
	}
	if err != nil {
		return nil, nil, err
	}
	if len(want) == 0 {
		return nil, nil, errors.New("input annotation list cannot be empty")
	}
	return want, extra, nil
}
