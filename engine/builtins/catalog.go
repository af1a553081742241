package builtins

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"

	replacements "github.com/kptdev/krm-functions-catalog/functions/go/apply-replacements/replacements"
	setnamespace "github.com/kptdev/krm-functions-catalog/functions/go/set-namespace/transformer"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/order"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The functions in this file delegate to the catalog's own Go packages (as
// Porch does), so their behaviour is the catalog's by construction.

func runSetNamespace(rl *resourceList) error {
	return runSDK(rl, setnamespace.Run)
}

// apply-replacements and starlark rebuild every item from scratch (starlark
// through its own data model, losing comments, field order and quoting), so
// their output is reconciled with the input afterwards.

func runApplyReplacements(rl *resourceList) error {
	involved, ok := replacementsInvolve(rl.functionConfig)
	if !ok {
		return replaceAll(rl)
	}
	return replaceInvolved(rl, involved)
}

// replaceInvolved is apply-replacements on the items involved picks
// (replacementsInvolve), the others left as they are.
func replaceInvolved(rl *resourceList, involved func(*yaml.RNode) bool) error {
	var sub []*yaml.RNode
	var at []int
	for i, it := range rl.items {
		if involved(it) {
			sub = append(sub, it)
			at = append(at, i)
		}
	}
	if len(sub) == len(rl.items) {
		return replaceAll(rl)
	}
	// The catalog re-serializes every item it is given and the result is
	// reconciled with the input: resources no replacement can read or
	// write are left out, and come back exactly as they were.
	part := &resourceList{apiVersion: rl.apiVersion, kind: rl.kind, items: sub, functionConfig: rl.functionConfig}
	err := replaceAll(part)
	rl.functionConfig = part.functionConfig
	rl.results = append(rl.results, part.results...)
	if err != nil {
		return err
	}
	if len(part.items) != len(sub) {
		return errors.New("internal error: apply-replacements changed the number of resources")
	}
	for j, i := range at {
		rl.items[i] = part.items[j]
	}
	return nil
}

func replaceAll(rl *resourceList) error {
	return preserving(rl, func(rl *resourceList) error { return runSDK(rl, replacements.ApplyReplacements) })
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
// a kind).
func replacementsInvolve(cfg *yaml.RNode) (involved func(*yaml.RNode) bool, ok bool) {
	if cfg == nil {
		return nil, false
	}
	var r replacements.Replacements
	if err := r.Config(fn.CopyToKubeObject(cfg)); err != nil {
		return nil, false
	}
	var targets []*regexp.Regexp
	for _, rep := range r.Replacements {
		if rep.Source != nil && rep.Source.Kind == "" {
			return nil, false
		}
		for _, t := range rep.Targets {
			if t == nil || t.Select == nil || t.Select.Kind == "" {
				return nil, false
			}
			// kustomize matches a target's kind as an anchored pattern
			re, err := regexp.Compile("^(?:" + t.Select.Kind + ")$")
			if err != nil {
				return nil, false
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
	}, true
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

// preserving runs p and then gives each output item that corresponds to an
// input item its input form back: the original node when the data is
// unchanged, so the item is written byte for byte, or else the original
// comments and field order, as kpt does after running a container
// function. Correspondence is kpt's: each input carries an id annotation
// through the function, so a renamed or re-namespaced resource keeps its
// comments (kpt-merge and setter comments included) too.
func preserving(rl *resourceList, p processor) error {
	inputs := map[string]*yaml.Node{}
	bare := map[*yaml.Node]bool{} // inputs that had no annotations
	for i, it := range rl.items {
		id := strconv.Itoa(i + 1)
		if annotationsNode(it) == nil {
			bare[it.YNode()] = true
		}
		if err := setItemID(it, id); err != nil {
			return err
		}
		inputs[id] = it.YNode()
	}
	origs := make([]*yaml.Node, 0, len(inputs))
	for _, n := range inputs {
		origs = append(origs, n)
	}
	err := p(rl)
	// Inputs the function dropped or replaced lose their ids too: the
	// caller may still hold them.
	defer func() {
		for _, n := range origs {
			clearItemID(yaml.NewRNode(n), bare[n])
		}
	}()
	for i, out := range rl.items {
		id := itemID(out)
		orig := inputs[id]
		delete(inputs, id)
		clearItemID(out, orig != nil && bare[orig])
		if orig == nil {
			continue
		}
		clearItemID(yaml.NewRNode(orig), bare[orig])
		switch {
		case orig == out.YNode():
		case sameData(orig, out.YNode()):
			rl.items[i] = yaml.NewRNode(orig)
		default:
			adoptUnchanged(orig, out.YNode())
			o := yaml.NewRNode(orig)
			if cerr := copyComments(o, out); cerr != nil {
				return cerr
			}
			if serr := order.SyncOrder(o, out); serr != nil {
				return serr
			}
		}
	}
	return err
}

// setItemID, itemID and clearItemID handle the id annotations kpt's
// function runner (kyaml's FunctionFilter) ties inputs to outputs with.
func setItemID(n *yaml.RNode, id string) error {
	if err := n.PipeE(yaml.SetAnnotation(kioutil.IdAnnotation, id)); err != nil {
		return err
	}
	return n.PipeE(yaml.SetAnnotation(kioutil.LegacyIdAnnotation, id)) //nolint:staticcheck // kpt sets both
}

func itemID(n *yaml.RNode) string {
	a := n.GetAnnotations(kioutil.IdAnnotation, kioutil.LegacyIdAnnotation) //nolint:staticcheck // kpt reads both
	if id := a[kioutil.IdAnnotation]; id != "" {
		return id
	}
	return a[kioutil.LegacyIdAnnotation] //nolint:staticcheck // kpt reads both
}

func clearItemID(n *yaml.RNode, bare bool) {
	if annotationsNode(n) == nil {
		return
	}
	_ = n.PipeE(yaml.ClearAnnotation(kioutil.IdAnnotation))
	_ = n.PipeE(yaml.ClearAnnotation(kioutil.LegacyIdAnnotation)) //nolint:staticcheck // kpt sets both
	if bare {
		_ = yaml.ClearEmptyAnnotations(n)
	}
}

func annotationsNode(n *yaml.RNode) *yaml.RNode {
	a, err := n.Pipe(yaml.Lookup(yaml.MetadataField, yaml.AnnotationsField))
	if err != nil {
		return nil
	}
	return a
}

// adoptUnchanged replaces each subtree of to whose data equals the
// corresponding subtree of from with that original subtree, so only what
// actually changed loses its original presentation.
func adoptUnchanged(from, to *yaml.Node) {
	if from.Kind != to.Kind {
		return
	}
	switch to.Kind {
	case yaml.MappingNode:
		for j := 0; j+1 < len(to.Content); j += 2 {
			for i := 0; i+1 < len(from.Content); i += 2 {
				if from.Content[i].Value != to.Content[j].Value {
					continue
				}
				to.Content[j] = from.Content[i]
				if sameData(from.Content[i+1], to.Content[j+1]) {
					to.Content[j+1] = from.Content[i+1]
				} else {
					adoptUnchanged(from.Content[i+1], to.Content[j+1])
				}
				break
			}
		}
	case yaml.SequenceNode:
		if len(from.Content) != len(to.Content) {
			return
		}
		to.Style = from.Style
		for i := range to.Content {
			if sameData(from.Content[i], to.Content[i]) {
				to.Content[i] = from.Content[i]
			} else {
				adoptUnchanged(from.Content[i], to.Content[i])
			}
		}
	}
}

// sameData reports whether two trees hold the same data, ignoring
// presentation: scalar style, comments and the order of map keys.
func sameData(a, b *yaml.Node) bool {
	if a.Kind == yaml.DocumentNode && len(a.Content) == 1 {
		a = a.Content[0]
	}
	if b.Kind == yaml.DocumentNode && len(b.Content) == 1 {
		b = b.Content[0]
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case yaml.ScalarNode:
		return a.Value == b.Value && a.ShortTag() == b.ShortTag()
	case yaml.SequenceNode:
		if len(a.Content) != len(b.Content) {
			return false
		}
		for i := range a.Content {
			if !sameData(a.Content[i], b.Content[i]) {
				return false
			}
		}
		return true
	case yaml.MappingNode:
		if len(a.Content) != len(b.Content) {
			return false
		}
		for i := 0; i+1 < len(a.Content); i += 2 {
			found := false
			for j := 0; j+1 < len(b.Content); j += 2 {
				if b.Content[j].Value == a.Content[i].Value {
					if !sameData(a.Content[i+1], b.Content[j+1]) {
						return false
					}
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	case yaml.AliasNode:
		return a.Value == b.Value
	}
	return true
}

// runSDK hands the items to a krm-functions-sdk processor without
// re-serializing them: the SDK's KubeObject can adopt a yaml node in place.
func runSDK(rl *resourceList, process func(*fn.ResourceList) (bool, error)) error {
	frl := &fn.ResourceList{Items: make(fn.KubeObjects, len(rl.items))}
	inputs := rl.items
	nodes := make([]*yaml.Node, len(inputs))
	for i, it := range inputs {
		nodes[i] = it.YNode()
		frl.Items[i] = fn.MoveToKubeObject(it)
	}
	// The SDK empties the RNodes it takes; the caller's RNodes (which
	// the renderer still holds, to merge a selection back) must go on
	// naming the nodes the function edited.
	defer func() {
		for i, it := range inputs {
			*it = *yaml.NewRNode(nodes[i])
		}
	}()
	hadConfig := rl.functionConfig != nil
	if hadConfig {
		frl.FunctionConfig = fn.MoveToKubeObject(rl.functionConfig)
	} else {
		frl.FunctionConfig = fn.NewEmptyKubeObject()
	}
	ok, err := process(frl)

	rl.items = make([]*yaml.RNode, 0, len(frl.Items))
	for _, o := range frl.Items {
		if o != nil {
			rl.items = append(rl.items, o.MoveToResourceNode())
		}
	}
	if hadConfig {
		rl.functionConfig = frl.FunctionConfig.MoveToResourceNode()
	}
	rl.results = append(rl.results, frl.Results...)
	if err != nil {
		return err
	}
	if !ok && firstError(rl.results) == nil {
		return errors.New("function reported failure")
	}
	return nil
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

// resultFor builds a result that points at one resource, the way catalog
// functions built on the SDK report per-resource changes.
func resultFor(n *yaml.RNode, msg string, sev fn.Severity) *fn.Result {
	r := &fn.Result{Message: msg, Severity: sev, ResourceRef: &fn.ResourceRef{
		APIVersion: n.GetApiVersion(),
		Kind:       n.GetKind(),
		Name:       n.GetName(),
		Namespace:  n.GetNamespace(),
	}}
	if path, _, err := kioutil.GetFileAnnotations(n); err == nil && path != "" {
		r.File = &fn.File{Path: path}
	}
	return r
}
