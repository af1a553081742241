package builtins

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins/resourcelist"
	"github.com/kptbot/kptbot/engine/builtins/searchreplace"
	replacements "github.com/kptdev/krm-functions-catalog/functions/go/apply-replacements/replacements"
	"github.com/kptdev/krm-functions-catalog/functions/go/apply-setters/applysetters"
	setnamespace "github.com/kptdev/krm-functions-catalog/functions/go/set-namespace/transformer"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A Stream applies one configured function to a package a piece at a time
// (a file, say), for a renderer that never holds the whole package in
// memory. Only functions that change each resource on its own, never add,
// drop or reorder resources, and whose results are per-resource findings
// plus a summary stream: for any split of a resource list into consecutive
// pieces, applying each piece and finishing with the pieces in order
// edits the resources and reports results exactly as Process on the whole
// list. The functions that stream run through their Stream in Process too,
// so the two cannot drift apart.
//
// Apply may be called from several goroutines at once.
type Stream struct {
	apply  func(items []*yaml.RNode) (Piece, error)
	finish func(pieces []Piece) fn.Results
	// unordered: the results do not depend on the order of the resources
	// (a summary count), so a renderer may stream the function even after
	// one that reorders the whole list.
	unordered bool
}

// Piece is what a Stream's Apply found in one piece of the package; Finish
// turns the pieces, in package order, into the function's results.
type Piece struct {
	results fn.Results
	count   int
	names   []string
	objects int // resources the function acted on (set-labels)
	// ids are the identities of the piece's resources, in order, for a
	// function that refuses two resources with one identity (one read
	// through kustomize's resource map, as set-annotations is).
	ids []resid.ResId
}

// ErrNotStreamable is returned by Stream.Apply when the piece holds
// something that ties resources together for this function (for
// set-namespace, a depends-on annotation, which names another resource):
// the caller must run the function on the whole list instead.
var ErrNotStreamable = errors.New("the function relates resources to each other here; it must see the whole package")

// Apply runs the function on items, in place. Items are never added,
// dropped or reordered. An error (ErrNotStreamable included) means the
// piece may be half edited and the caller must start over from the input.
//
// A panic in the function (the catalog code uses *OrDie helpers) is an
// error, as it is in Process.
func (s *Stream) Apply(items []*yaml.RNode) (p Piece, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = Piece{}, fmt.Errorf("function panicked: %v", r)
		}
	}()
	return s.apply(items)
}

// Finish returns the function's results for the whole package, given the
// pieces Apply returned, in package order.
func (s *Stream) Finish(pieces []Piece) fn.Results { return s.finish(pieces) }

// ResultsFollowOrder reports whether the results (per-resource findings,
// the first duplicate found) depend on the order the resources come in.
func (s *Stream) ResultsFollowOrder() bool { return !s.unordered }

// Stream prepares f, configured with functionConfig (nil when the
// pipeline gives none), to run piece by piece. ok is false when f cannot
// stream: it relates resources to each other (apply-replacements,
// starlark, ensure-name-substring, upsert-resource), this configuration
// makes it do so, or the configuration is invalid (Process reports that).
func (f *Function) Stream(functionConfig *yaml.RNode) (s *Stream, ok bool) {
	if f == nil || f.stream == nil {
		return nil, false
	}
	s, err := f.stream(functionConfig)
	if err != nil || s == nil {
		return nil, false
	}
	return s, true
}

// Streams reports whether f can run piece by piece with some
// configuration (Stream, or Sources and StreamWith, say for a given one).
func (f *Function) Streams() bool { return f != nil && (f.stream != nil || f.sourced != nil) }

// SourceFunc picks, among the resources a function is given, those each
// piece must see although they are in other pieces.
type SourceFunc func(*yaml.RNode) bool

// Sources reports whether f, configured with functionConfig, reads
// values across resources that it can be handed up front
// (apply-replacements: its replacement sources), and which resources
// those may be. ok is false for every other function and for an invalid
// configuration. A caller then collects copies of the resources pick
// chooses, as the function would meet them, and calls StreamWith.
func (f *Function) Sources(functionConfig *yaml.RNode) (pick SourceFunc, ok bool) {
	if f == nil || f.sourced == nil {
		return nil, false
	}
	pick, _, err := f.sourced(functionConfig)
	if err != nil {
		return nil, false
	}
	return pick, true
}

// StreamWith is Stream for a function that needs Sources: every piece
// is run together with the sources that are not in it (copies, dropped
// afterwards), so each piece sees what the whole list would show it.
// Whatever the sources miss (a resource that becomes a source only
// through an earlier replacement) makes some piece fail, and the caller
// falls back to the whole list.
func (f *Function) StreamWith(functionConfig *yaml.RNode, sources []*yaml.RNode) (*Stream, bool) {
	if f == nil || f.sourced == nil {
		return nil, false
	}
	_, stream, err := f.sourced(functionConfig)
	if err != nil || len(sources) > maxSources {
		return nil, false
	}
	return stream(sources), true
}

// sourcer prepares a function that needs sources: which resources they
// may be, and its Stream given them.
type sourcer func(cfg *yaml.RNode) (SourceFunc, func(sources []*yaml.RNode) *Stream, error)

// streamer prepares a Stream from a function config; an error is a bad
// configuration, reported by Process as the function's failure.
type streamer func(cfg *yaml.RNode) (*Stream, error)

// streamed is the body of a function that has a Stream: the whole list is
// one piece.
func streamed(prepare streamer) processor {
	return func(rl *resourcelist.List) error {
		s, err := prepare(rl.FunctionConfig)
		if err != nil {
			return err
		}
		p, err := s.apply(rl.Items)
		if err != nil {
			return err
		}
		rl.Results = append(rl.Results, s.finish([]Piece{p})...)
		return nil
	}
}

// constant is a Stream that changes nothing and reports results.
func constant(results fn.Results) *Stream {
	return &Stream{
		apply:  func([]*yaml.RNode) (Piece, error) { return Piece{}, nil },
		finish: func([]Piece) fn.Results { return append(fn.Results(nil), results...) },
	}
}

// total sums the pieces' counts.
func total(pieces []Piece) int {
	n := 0
	for _, p := range pieces {
		n += p.count
	}
	return n
}

// Findings counts the per-resource results the pieces hold: results a
// renderer must list in the order the function saw the resources.
func Findings(pieces []Piece) int {
	n := 0
	for _, p := range pieces {
		n += len(p.results)
	}
	return n
}

// findings concatenates the pieces' per-resource results.
func findings(pieces []Piece) fn.Results {
	var out fn.Results
	for _, p := range pieces {
		out = append(out, p.results...)
	}
	return out
}

// counting is a Stream whose pieces count changes and whose only result is
// a summary of the total.
func counting(apply func(items []*yaml.RNode) (int, error), summary func(n int) *fn.Result) *Stream {
	return &Stream{
		apply: func(items []*yaml.RNode) (Piece, error) {
			n, err := apply(items)
			return Piece{count: n}, err
		},
		finish:    func(pieces []Piece) fn.Results { return fn.Results{summary(total(pieces))} },
		unordered: true,
	}
}

// streamSearchReplace is search-replace; each piece matches and counts
// on its own (searchreplace.Replacer.Apply). Results and errors are the
// catalog's: one result per field without severity, "no matches" when
// none, and errors quoted after "failed to perform search-replace
// operation: ".
func streamSearchReplace(cfg *yaml.RNode) (*Stream, error) {
	fail := func(err error) error {
		return fmt.Errorf("failed to perform search-replace operation: %q", err.Error())
	}
	if k := resourcelist.KindOf(cfg); !k.IsConfigMap() {
		return nil, fail(fmt.Errorf("functionConfig: expected a ConfigMap with by-* and put-* data, got kind %s", k))
	}
	data, err := resourcelist.StringMap(cfg, "data")
	if err != nil {
		return nil, fail(err)
	}
	sr, err := searchreplace.New(data)
	if err != nil {
		return nil, fail(err)
	}
	apply := func(items []*yaml.RNode) (Piece, error) {
		results, count, err := sr.Apply(items)
		if err != nil {
			return Piece{}, fail(err)
		}
		return Piece{results: results, count: count}, nil
	}
	finish := func(pieces []Piece) fn.Results {
		if found := findings(pieces); len(found) > 0 {
			return found
		}
		return fn.Results{{Message: "no matches"}}
	}
	return &Stream{apply: apply, finish: finish}, nil
}

// streamApplySetters mirrors the catalog's apply-setters main package,
// which is not importable, around its importable applysetters filter; its
// results, like the catalog's, carry no severity.
func streamApplySetters(cfg *yaml.RNode) (*Stream, error) {
	var tmpl applysetters.ApplySetters
	if cfg != nil {
		applysetters.Decode(cfg, &tmpl)
	}
	// Decode ranges over a map; sort so results come out in a stable order.
	sort.Slice(tmpl.Setters, func(i, j int) bool { return tmpl.Setters[i].Name < tmpl.Setters[j].Name })
	apply := func(items []*yaml.RNode) (Piece, error) {
		as := applysetters.ApplySetters{Setters: tmpl.Setters} // the filter appends to its Results
		// The catalog's filter walks every node of every resource looking
		// for "# kpt-set: " line comments; resources without one cannot change.
		var tagged []*yaml.RNode
		for _, n := range items {
			if hasLineComment(n.YNode(), "kpt-set:") {
				tagged = append(tagged, n)
			}
		}
		if len(tagged) == 0 {
			return Piece{}, nil
		}
		if _, err := as.Filter(tagged); err != nil {
			return Piece{}, fmt.Errorf("failed to apply setters: %w", err)
		}
		var p Piece
		for _, r := range as.Results {
			p.results = append(p.results, &fn.Result{
				Message: fmt.Sprintf("set field value to %q", r.Value),
				Field:   &fn.Field{Path: r.FieldPath},
				File:    &fn.File{Path: r.FilePath},
			})
		}
		return p, nil
	}
	finish := func(pieces []Piece) fn.Results {
		found := findings(pieces)
		if len(found) == 0 {
			return fn.Results{{Message: "no matches for input setter(s)"}}
		}
		return found
	}
	return &Stream{apply: apply, finish: finish}, nil
}

// streamSetNamespace is the catalog's set-namespace Transform (run on the
// whole list by Process, through the catalog's Run) split into the
// catalog's own exported steps: WalkAndReplace per piece, the summary once.
// It streams only without a namespaceMatcher (whose per-resource notes
// the catalog orders cluster-scoped resources first across the whole
// list) and only for pieces without depends-on annotations (rewritten
// only if the resource they name is in the list).
func streamSetNamespace(cfg *yaml.RNode) (*Stream, error) {
	if cfg == nil {
		return nil, errors.New("set-namespace needs a functionConfig")
	}
	var sn setnamespace.SetNamespace
	if err := sn.Config(fn.CopyToKubeObject(cfg)); err != nil {
		return nil, err
	}
	if sn.NamespaceMatcher != "" {
		return nil, errors.New("namespaceMatcher: the catalog reports matches across the whole list")
	}
	newNs := sn.NewNamespace
	apply := func(items []*yaml.RNode) (Piece, error) {
		objects := make(fn.KubeObjects, 0, len(items))
		for _, it := range items {
			if strings.Contains(it.GetAnnotations(dependsOnAnnotation)[dependsOnAnnotation], "/namespaces/") {
				return Piece{}, ErrNotStreamable
			}
		}
		for _, it := range items {
			objects = append(objects, fn.MoveToKubeObject(it))
		}
		defer func() {
			// Give every item its node back: the SDK moved it out.
			for i, o := range objects {
				*items[i] = *o.MoveToResourceNode()
			}
		}()
		local := objects.WhereNot(func(o *fn.KubeObject) bool { return o.IsLocalConfig() })
		results, count, old := setnamespace.WalkAndReplace(local, newNs)
		return Piece{results: results, count: count, names: old}, nil
	}
	finish := func(pieces []Piece) fn.Results {
		seen := map[string]bool{}
		var old []string
		for _, p := range pieces {
			for _, n := range p.names {
				if !seen[n] {
					seen[n] = true
					old = append(old, n)
				}
			}
		}
		sort.Strings(old)
		results := setnamespace.AddSummaryResult(findings(pieces), total(pieces), newNs, old...)
		return setnamespace.AddAnnotationResult(results, 0, newNs)
	}
	return &Stream{apply: apply, finish: finish}, nil
}

// maxSources bounds the resources copied into every piece: beyond it the
// whole list is cheaper.
const maxSources = 256

// sourceIdentity names a resource by where the renderer read it (package,
// file, index), which every copy of it keeps.
func sourceIdentity(n *yaml.RNode) [3]string {
	a := n.GetAnnotations(kioutil.PathAnnotation, kioutil.IndexAnnotation, "internal.config.kubernetes.io/package-path")
	return [3]string{a["internal.config.kubernetes.io/package-path"], a[kioutil.PathAnnotation], a[kioutil.IndexAnnotation]}
}

// sourceApplyReplacements: a replacement's source is one resource selected
// by its identity; a piece sees, besides its own resources, copies of
// every resource that may be one (replacementSources), as they were when
// the function began.
func sourceApplyReplacements(cfg *yaml.RNode) (SourceFunc, func([]*yaml.RNode) *Stream, error) {
	if cfg == nil {
		return nil, nil, errors.New("apply-replacements needs a functionConfig")
	}
	var r replacements.Replacements
	if err := r.Config(fn.CopyToKubeObject(cfg)); err != nil {
		return nil, nil, err
	}
	for _, rep := range r.Replacements {
		if rep.Source != nil && rep.Source.Kind == "" {
			return nil, nil, errors.New("a source selected without a kind may be any resource")
		}
	}
	pick := replacementSources(r.Replacements)
	involved, _, narrowed := replacementsInvolve(cfg)
	stream := func(sources []*yaml.RNode) *Stream {
		apply := func(items []*yaml.RNode) (Piece, error) {
			own := make(map[[3]string]bool, len(items))
			for _, it := range items {
				own[sourceIdentity(it)] = true
			}
			var list []*yaml.RNode
			for _, src := range sources {
				if !own[sourceIdentity(src)] {
					list = append(list, src.Copy())
				}
			}
			extra := len(list)
			list = append(list, items...)
			rl := &resourcelist.List{APIVersion: "config.kubernetes.io/v1", Kind: "ResourceList", Items: list, FunctionConfig: cfg.Copy()}
			run := func(rl *resourcelist.List) error { return replaceAll(rl, replacements.ApplyReplacements) }
			if narrowed {
				run = func(rl *resourcelist.List) error {
					return replaceInvolved(rl, involved, replacements.ApplyReplacements)
				}
			}
			if err := run(rl); err != nil {
				return Piece{}, err
			}
			if e := resourcelist.FirstError(rl.Results); e != nil {
				return Piece{}, errors.New(e.Message)
			}
			if len(rl.Items) != len(list) {
				return Piece{}, ErrNotStreamable
			}
			out := rl.Items[extra:]
			for i, it := range items {
				if sourceIdentity(out[i]) != sourceIdentity(it) {
					return Piece{}, ErrNotStreamable
				}
			}
			for i, it := range items {
				*it = *out[i]
			}
			return Piece{results: rl.Results}, nil
		}
		return &Stream{apply: apply, finish: findings}
	}
	return pick, stream, nil
}
