package builtins

import (
	"errors"
	"fmt"

	"github.com/kptbot/kptbot/engine/builtins/fieldspec"
	"github.com/kptbot/kptbot/engine/builtins/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// streamSetLabelsV01 is set-labels as the catalog's v0.1 line (v0.1.5)
// writes it: kustomize's commonLabels field specs plus
// additionalLabelFields, applied to every resource, package-local config
// included (the catalog loads them all into kustomize's resource map); no
// results when it succeeds; errors after "failed to configure function: "
// and, for two resources with one identity, kustomize's resource map
// refusal after "failed to run function: ".
func streamSetLabelsV01(cfg *yaml.RNode) (*Stream, error) {
	want, extra, err := labelsConfigV01(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to configure function: %w", err)
	}
	specs := append(extra, fieldspec.Labels()...)
	apply := func(items []*yaml.RNode) (Piece, error) {
		p := Piece{ids: make([]resid.ResId, len(items))}
		for i, it := range items {
			p.ids[i] = resid.NewResIdWithNamespace(resid.GvkFromNode(it), it.GetName(), it.GetNamespace())
		}
		_, err := setMapEntries(items, specs, want, false)
		return p, err
	}
	finish := func(pieces []Piece) fn.Results {
		if dup := duplicateID(pieces); dup != nil {
			return fn.Results{{Message: "failed to run function: may not add resource with an already registered id: " + legacyIDString(*dup), Severity: fn.Error}}
		}
		return nil
	}
	// the one result is the first duplicate, an error, which a renderer
	// does not stream
	return &Stream{apply: apply, finish: finish, unordered: true}, nil
}

// labelsConfigV01 reads v0.1's function config: a v1 ConfigMap's data, or
// fn.kpt.dev/v1alpha1 SetLabels (or the older SetLabelConfig) with labels
// and additionalLabelFields (or the deprecated fieldSpecs). Kind and
// apiVersion must match exactly, as the catalog compares them; kpt eval's
// empty "function-input" ConfigMap has no labels.
func labelsConfigV01(cfg *yaml.RNode) (map[string]string, types.FsSlice, error) {
	var (
		want  map[string]string
		extra types.FsSlice
		err   error
	)
	av, kind := "", ""
	if cfg != nil && len(cfg.YNode().Content) > 0 {
		av, kind = cfg.GetApiVersion(), cfg.GetKind()
	}
	switch {
	case av == "v1" && kind == "ConfigMap":
		want, err = resourcelist.StringMap(cfg, "data")
	case av == resourcelist.FnConfigGroup+"/v1alpha1" && (kind == "SetLabels" || kind == "SetLabelConfig"):
		if want, err = resourcelist.StringMap(cfg, "labels"); err != nil {
			return nil, nil, err
		}
		var legacy types.FsSlice
		if extra, err = fieldspec.Decode(cfg, "additionalLabelFields"); err != nil {
			return nil, nil, err
		}
		if legacy, err = fieldspec.Decode(cfg, "fieldSpecs"); err != nil {
			return nil, nil, err
		}
		if extra != nil && legacy != nil {
			return nil, nil, errors.New("`fieldSpecs` has been deprecated, please rename it to `additionalLabelFields`")
		}
		if extra == nil {
			extra = legacy
		}
	default:
		return nil, nil, errors.New("`functionConfig` must be either a `ConfigMap` or `SetLabels`")
	}
	if err != nil {
		return nil, nil, err
	}
	if len(want) == 0 {
		return nil, nil, errors.New("input label list cannot be empty")
	}
	return want, extra, nil
}
