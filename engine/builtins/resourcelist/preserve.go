package resourcelist

import (
	"errors"
	"strconv"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Preserving runs p and then gives each output item that corresponds to an
// input item its input form back: the original node when the data is
// unchanged, so the item is written byte for byte, or else the original
// comments and field order, as kpt does after running a container
// function. Correspondence is kpt's: each input carries an id annotation
// through the function, so a renamed or re-namespaced resource keeps its
// comments (kpt-merge and setter comments included) too.
func Preserving(rl *List, p func(*List) error) error {
	inputs := map[string]*yaml.Node{}
	bare := map[*yaml.Node]bool{} // inputs that had no annotations
	for i, it := range rl.Items {
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
	for i, out := range rl.Items {
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
			rl.Items[i] = yaml.NewRNode(orig)
		default:
			adoptUnchanged(orig, out.YNode())
			o := yaml.NewRNode(orig)
			if cerr := copyComments(o, out); cerr != nil {
				return cerr
			}
			if serr := syncOrder(orig, out.YNode()); serr != nil {
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

// RunSDK hands the items to a krm-functions-sdk processor without
// re-serializing them: the SDK's KubeObject can adopt a yaml node in place.
func RunSDK(rl *List, process func(*fn.ResourceList) (bool, error)) error {
	frl := &fn.ResourceList{Items: make(fn.KubeObjects, len(rl.Items))}
	inputs := rl.Items
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
	hadConfig := rl.FunctionConfig != nil
	if hadConfig {
		frl.FunctionConfig = fn.MoveToKubeObject(rl.FunctionConfig)
	} else {
		frl.FunctionConfig = fn.NewEmptyKubeObject()
	}
	ok, err := process(frl)

	rl.Items = make([]*yaml.RNode, 0, len(frl.Items))
	for _, o := range frl.Items {
		if o != nil {
			rl.Items = append(rl.Items, o.MoveToResourceNode())
		}
	}
	if hadConfig {
		rl.FunctionConfig = frl.FunctionConfig.MoveToResourceNode()
	}
	rl.Results = append(rl.Results, frl.Results...)
	if err != nil {
		return err
	}
	if !ok && FirstError(rl.Results) == nil {
		return errors.New("function reported failure")
	}
	return nil
}

// FirstError returns the first error-severity result, or nil.
func FirstError(results fn.Results) *fn.Result {
	for _, r := range results {
		if r != nil && r.Severity == fn.Error {
			return r
		}
	}
	return nil
}

// IsBookkeeping reports whether an annotation is one kpt's function runner
// keeps on items (file path, index, id, sequence indent): functions pass
// them through and never report or rename them.
func IsBookkeeping(key string) bool {
	switch key {
	case kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.IdAnnotation, kioutil.SeqIndentAnnotation,
		kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation, kioutil.LegacyIdAnnotation, //nolint:staticcheck // kpt sets both
		kioutil.InternalAnnotationsMigrationResourceIDAnnotation:
		return true
	}
	return false
}
