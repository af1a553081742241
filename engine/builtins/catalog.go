package builtins

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins/resourcelist"
	"github.com/kptbot/kptbot/engine/builtins/starlarkfn"
	replacements "github.com/kptdev/krm-functions-catalog/functions/go/apply-replacements/replacements"
	setnamespace "github.com/kptdev/krm-functions-catalog/functions/go/set-namespace/transformer"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The functions in this file delegate to the catalog's own Go packages (as
// Porch does), so their behaviour is the catalog's by construction.

func runStarlark(rl *resourcelist.List) error {
	return resourcelist.Preserving(rl, func(rl *resourcelist.List) error {
		ctx := rl.Ctx
		if ctx == nil {
			ctx = context.Background()
		}
		return resourcelist.RunSDK(rl, func(frl *fn.ResourceList) (bool, error) { return starlarkfn.Process(ctx, rl.MaxSteps, rl.Stderr, frl) })
	})
}

func runSetNamespace(rl *resourcelist.List) error {
	return resourcelist.RunSDK(rl, setnamespace.Run)
}

// apply-replacements and starlark rebuild every item from scratch (starlark
// through its own data model, losing comments, field order and quoting), so
// their output is reconciled with the input afterwards.

func runApplyReplacements(rl *resourcelist.List) error {
	involved, r, ok := replacementsInvolve(rl.FunctionConfig)
	if !ok {
		return replaceAll(rl, replacements.ApplyReplacements)
	}
	return replaceInvolved(rl, involved, configuredReplacements(r))
}

// configuredReplacements is the catalog's Replacements.Process with its
// config already read (replacementsInvolve read the same config and
// succeeded; reading it again cost as much as the transform).
func configuredReplacements(r *replacements.Replacements) func(*fn.ResourceList) (bool, error) {
	return func(frl *fn.ResourceList) (bool, error) {
		items, err := r.Transform(frl.Items)
		if err != nil {
			frl.LogResult(err)
			return false, nil
		}
		frl.Items = items
		return true, nil
	}
}

// replaceInvolved is apply-replacements (process) on the items involved
// picks (replacementsInvolve), the others left as they are.
func replaceInvolved(rl *resourcelist.List, involved func(*yaml.RNode) bool, process func(*fn.ResourceList) (bool, error)) error {
	var sub []*yaml.RNode
	var at []int
	for i, it := range rl.Items {
		if involved(it) {
			sub = append(sub, it)
			at = append(at, i)
		}
	}
	if len(sub) == len(rl.Items) {
		return replaceAll(rl, process)
	}
	// The catalog re-serializes every item it is given and the result is
	// reconciled with the input: resources no replacement can read or
	// write are left out, and come back exactly as they were.
	part := &resourcelist.List{APIVersion: rl.APIVersion, Kind: rl.Kind, Items: sub, FunctionConfig: rl.FunctionConfig}
	err := replaceAll(part, process)
	rl.FunctionConfig = part.FunctionConfig
	rl.Results = append(rl.Results, part.Results...)
	if err != nil {
		return err
	}
	if len(part.Items) != len(sub) {
		return errors.New("internal error: apply-replacements changed the number of resources")
	}
	for j, i := range at {
		rl.Items[i] = part.Items[j]
	}
	return nil
}

func replaceAll(rl *resourcelist.List, process func(*fn.ResourceList) (bool, error)) error {
	return resourcelist.Preserving(rl, func(rl *resourcelist.List) error { return resourcelist.RunSDK(rl, process) })
}

// previousIDAnnotations name a resource's earlier identities, which
// kustomize's selection also matches.
var previousIDAnnotations = []string{
	"internal.config.kubernetes.io/previousNames",
	"internal.config.kubernetes.io/previousKinds",
	"internal.config.kubernetes.io/previousNamespaces",
}

// replacementsInvolve reports which resources apply-replacements,
// configured with cfg, may read (a source: same kind and name) or write (a
// target: a kind its select pattern matches); ok is false when that cannot
// be told (a bad config, which the catalog reports, or a selector without
// a kind). r is the config as the catalog reads it.
func replacementsInvolve(cfg *yaml.RNode) (involved func(*yaml.RNode) bool, r *replacements.Replacements, ok bool) {
	if cfg == nil {
		return nil, nil, false
	}
	r = &replacements.Replacements{}
	if err := r.Config(fn.CopyToKubeObject(cfg)); err != nil {
		return nil, nil, false
	}
	var targets []*regexp.Regexp
	for _, rep := range r.Replacements {
		if rep.Source != nil && rep.Source.Kind == "" {
			return nil, nil, false
		}
		for _, t := range rep.Targets {
			if t == nil || t.Select == nil || t.Select.Kind == "" {
				return nil, nil, false
			}
			// kustomize matches a target's kind as an anchored pattern
			re, err := regexp.Compile("^(?:" + t.Select.Kind + ")$")
			if err != nil {
				return nil, nil, false
			}
			targets = append(targets, re)
		}
	}
	source := replacementSources(r.Replacements)
	return func(n *yaml.RNode) bool {
		if source(n) {
			return true
		}
		kind := n.GetKind()
		for _, re := range targets {
			if re.MatchString(kind) {
				return true
			}
		}
		return false
	}, r, true
}

// replacementSources reports which resources may be a replacement's source:
// the selector's kind and name (kustomize also matches namespaces loosely,
// "" and "default" alike, so they are not compared), or any resource with
// earlier identities, which kustomize's selection matches too. A selector
// without a kind makes every resource a candidate.
func replacementSources(reps []types.Replacement) func(*yaml.RNode) bool {
	return func(n *yaml.RNode) bool {
		if len(n.GetAnnotations(previousIDAnnotations...)) > 0 {
			return true
		}
		kind, name := n.GetKind(), n.GetName()
		for _, rep := range reps {
			if s := rep.Source; s != nil && (s.Kind == "" || s.Kind == kind) && (s.Name == "" || s.Name == name) {
				return true
			}
		}
		return false
	}
}

// hasLineComment reports whether a node of the tree has a line comment
// containing s.
func hasLineComment(n *yaml.Node, s string) bool {
	if n == nil {
		return false
	}
	if strings.Contains(n.LineComment, s) {
		return true
	}
	for _, c := range n.Content {
		if hasLineComment(c, s) {
			return true
		}
	}
	return false
}

// skipWithoutSetters: setters live only in "kpt-set:" comments.
func skipWithoutSetters(*yaml.RNode) func([]byte) bool {
	return func(chunk []byte) bool { return !bytes.Contains(chunk, []byte("kpt-set:")) }
}
