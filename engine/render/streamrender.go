package render

import (
	"context"
	"errors"
	"hash/maphash"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/kptbot/kptbot/engine/builtins"
	"github.com/kptbot/kptbot/engine/fnresults"
	"github.com/kptbot/kptbot/engine/kptpkg"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// errFallBack stops a streamed render: the package needs the hydrator's
// whole-list render (which also reports any error exactly as kpt does).
var errFallBack = errors.New("render needs the whole package in memory")

// streamRender renders a package whose pipelines are made only of
// built-ins that stream (builtins.Stream: set-namespace, set-labels,
// set-annotations, set-image, search-replace, apply-setters, each
// changing every resource on its own; and apply-replacements, given its
// sources up front) one file at a time, on all CPUs, so the package's
// parsed trees never sit in memory together: memory is the package's
// bytes in and out plus a file's trees per CPU, where the whole-list
// render holds ~45x the package in yaml.v3 nodes.
//
// Each file goes through its package's pipeline and then each enclosing
// package's, which is what the hydrator does to it (subpackages first,
// every function seeing each resource on its own); function configs read
// from the pipeline's input (configPath) are taken first, by running the
// packages' config files through their pipelines, and apply-replacements'
// possible sources by running every file up to that step; each
// function's results are the pieces' results in package order plus one
// summary. ok
// is false, and nothing is written, when the package needs the whole-list
// render: a function that relates resources, a file the fast reader or
// writer does not handle, a function that moves a resource to another
// file, or any failure (the whole-list render then reports it exactly).
// TestStreamRenderMatchesHydrator holds the two to the same bytes and
// results.
func streamRender(ctx context.Context, in kptpkg.Tree, opts RenderOptions) (out kptpkg.Tree, results *fnresults.List, ok bool, err error) {
	s, ok := newStreamRender(in, opts)
	if !ok {
		return nil, nil, false, nil
	}
	out, results, err = s.render(ctx)
	if errors.Is(err, errFallBack) {
		return nil, nil, false, nil
	}
	return out, results, err == nil || ctx.Err() != nil, err
}

// streamFile is one file of the package tree, in render order.
type streamFile struct {
	pkg string // package directory, relative to the root
	rel string // path relative to pkg
}

// streamStep is one function of a package's pipeline, prepared.
type streamStep struct {
	fn     kptfilev1.Function
	image  string
	stream *builtins.Stream
	pieces []builtins.Piece // per file, by render order
	// sorted: a step before this one handed the whole list on in the KRM
	// function SDK's order, which the files streamed apart never get.
	sorted bool
}

// streamRenderer is one streamed render: the package's files in render
// order, its packages, and each package's prepared functions.
type streamRenderer struct {
	h     *hydrator
	pkgs  map[string]*kptfilev1.KptFile
	files []streamFile
	order []string // packages, in hydration order (subpackages first)
	// input is the packages in the order their files make up a pipeline's
	// input: each package before its subpackages (beta.67's order, the
	// hydrator's), so every function sees the resources as it would there.
	input  []string
	parent map[string]string
	steps  map[string][2][]*streamStep // per package: mutators, validators
	sorted bool                        // a step prepared so far sorts its output (streamStep.sorted)
}

func newStreamRender(in kptpkg.Tree, opts RenderOptions) (*streamRenderer, bool) {
	prefix := opts.ImagePrefix
	if prefix == "" {
		prefix = DefaultImagePrefix
	}
	h := &hydrator{root: "/pkg", prefix: strings.TrimSuffix(prefix, "/"), fns: map[string]*builtins.Function{}, seed: maphash.MakeSeed(), tree: in}
	pkgs, streams, err := h.qualify(in, opts.kptfiles)
	if err != nil || !streams {
		return nil, false
	}
	for _, b := range h.fns {
		if !b.Streams() {
			return nil, false
		}
	}
	s := &streamRenderer{h: h, pkgs: pkgs, parent: map[string]string{}, steps: map[string][2][]*streamStep{}}
	var walk func(dir string)
	walk = func(dir string) {
		s.input = append(s.input, dir)
		for _, sub := range subpackagesOf(dir, pkgs) {
			s.parent[sub] = dir
			walk(sub)
		}
		s.order = append(s.order, dir)
	}
	walk(".")
	return s, true
}

func (s *streamRenderer) render(ctx context.Context) (kptpkg.Tree, *fnresults.List, error) {
	if err := s.list(); err != nil {
		return nil, nil, err
	}
	for _, dir := range s.order {
		if err := s.prepare(dir); err != nil {
			return nil, nil, err
		}
	}
	outs := make([][]byte, len(s.files))
	errs := make([]error, len(s.files))
	var failed atomic.Bool
	kptpkg.ForEachParallel(len(s.files), func(i int) {
		if failed.Load() || ctx.Err() != nil {
			return
		}
		if outs[i], errs[i] = s.renderFile(i); errs[i] != nil {
			failed.Store(true)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, nil, errFallBack
		}
	}
	results := fnresults.NewList()
	for _, dir := range s.order {
		for _, steps := range s.steps[dir] {
			for _, st := range steps {
				if st.sorted && st.stream.ResultsFollowOrder() && builtins.Findings(st.pieces) > 0 {
					// per-resource results in file order, not the SDK's
					return nil, nil, errFallBack
				}
				found := st.stream.Finish(st.pieces)
				for _, r := range found {
					if r != nil && r.Severity == sdk.Error {
						return nil, nil, errFallBack
					}
				}
				results.Items = append(results.Items, fnresults.Result{Image: st.image, Results: fnresults.FromSDK(found)})
			}
		}
	}
	out := make(kptpkg.Tree, len(s.h.tree))
	for p, b := range s.h.tree {
		out[p] = b
	}
	for i, b := range outs {
		if b != nil {
			out[path.Join(s.files[i].pkg, s.files[i].rel)] = b
		}
	}
	return out, results, nil
}

// reader is the package reader the hydrator reads dir with.
func (s *streamRenderer) reader(dir string, fsys filesys.FileSystem) kio.LocalPackageReader {
	return kio.LocalPackageReader{
		PackagePath:       s.h.abs(dir),
		PackageFileName:   kptpkg.KptfileName,
		MatchFilesGlob:    MatchAllKRM,
		PreserveSeqIndent: true,
		SetAnnotations:    map[string]string{PkgPathAnnotation: s.h.abs(dir)},
		WrapBareSeqNode:   true,
		FileSystem:        filesys.FileSystemOrOnDisk{FileSystem: fsys},
	}
}

// list finds every package's files, in the order they stand in the
// hydrator's pipeline inputs (a package's own files, then each
// subpackage's, depth first), through kio's own walk over a file system
// of empty files (names only, but for the .krmignore files the walk
// reads). Pieces and sources are gathered in this order.
func (s *streamRenderer) list() error {
	names := filesys.MakeFsInMemory()
	for p, b := range s.h.tree {
		full := path.Join(s.h.root, p)
		if err := names.MkdirAll(path.Dir(full)); err != nil {
			return errFallBack
		}
		var content []byte
		if path.Base(p) == ".krmignore" {
			content = b
		}
		if err := names.WriteFile(full, content); err != nil {
			return errFallBack
		}
	}
	for _, dir := range s.input {
		_, rels, err := kptpkg.ListPackageFiles(s.reader(dir, names))
		if err != nil {
			return errFallBack
		}
		for _, rel := range rels {
			s.files = append(s.files, streamFile{pkg: dir, rel: filepath.ToSlash(rel)})
		}
	}
	return nil
}

// parse reads file i as the hydrator's reader does.
func (s *streamRenderer) parse(i int) ([]*yaml.RNode, error) {
	f := s.files[i]
	nodes, err := kptpkg.ParseFile(s.reader(f.pkg, nil), f.rel, s.h.tree[path.Join(f.pkg, f.rel)])
	if err != nil {
		return nil, errFallBack
	}
	return nodes, nil
}

// prepare configures dir's functions. Mutators whose configPath names a
// resource of the package get it as the pipeline's earlier functions left
// it: the package's config files run through the pipeline first.
func (s *streamRenderer) prepare(dir string) error {
	kf := s.pkgs[dir]
	var steps [2][]*streamStep
	if kf.Pipeline == nil {
		s.steps[dir] = steps
		return nil
	}
	configs := map[string]bool{}
	for _, f := range kf.Pipeline.Mutators {
		if f.ConfigPath != "" {
			configs[path.Clean(filepath.ToSlash(f.ConfigPath))] = true
		}
	}
	var chunk []*yaml.RNode
	for i, f := range s.files {
		if f.pkg == dir && configs[f.rel] {
			nodes, err := s.parse(i)
			if err != nil {
				return err
			}
			chunk = append(chunk, nodes...)
		}
	}
	for _, mutator := range []bool{true, false} {
		fns := kf.Pipeline.Mutators
		if !mutator {
			fns = kf.Pipeline.Validators
		}
		for _, f := range fns {
			if err := AreKRM(chunk); err != nil {
				return errFallBack
			}
			var source []*yaml.RNode
			if mutator {
				source = chunk
			}
			config, err := s.h.config(dir, f, source)
			if err != nil {
				return errFallBack
			}
			image := s.h.resolve(f.Image)
			b := s.h.fns[image]
			if (len(f.Selectors) > 0 || len(f.Exclusions) > 0) && b.ReadsAnyField() {
				// A selection numbers the resources of the whole list in a
				// bookkeeping annotation such a function sees (and may
				// change); a file's resources would be numbered apart.
				return errFallBack
			}
			var stream *builtins.Stream
			var ok bool
			if pick, sourced := b.Sources(config); sourced && mutator {
				s.steps[dir] = steps // the steps before this one, for the files to go through
				sources, err := s.sources(dir, len(steps[0]), f, pick)
				if err != nil {
					return err
				}
				stream, ok = b.StreamWith(config, sources)
			} else {
				stream, ok = b.Stream(config)
			}
			if !ok {
				return errFallBack
			}
			st := &streamStep{fn: f, image: image, stream: stream, pieces: make([]builtins.Piece, len(s.files)), sorted: s.sorted}
			s.sorted = s.sorted || b.SortsOutput()
			if mutator {
				steps[0] = append(steps[0], st)
				if chunk, err = s.h.step(dir, f, chunk, true, applier(st, -1)); err != nil {
					return errFallBack
				}
			} else {
				steps[1] = append(steps[1], st)
			}
		}
	}
	s.steps[dir] = steps
	return nil
}

// applier runs st's stream on the selected resources of file i (or of
// the config files, i < 0, whose pieces are not kept).
func applier(st *streamStep, i int) func(selected []*yaml.RNode) ([]*yaml.RNode, error) {
	return func(selected []*yaml.RNode) ([]*yaml.RNode, error) {
		p, err := st.stream.Apply(selected)
		if i >= 0 {
			st.pieces[i] = p
		}
		return selected, err
	}
}

// through runs file i's resources through its package's pipeline and
// each enclosing package's, up to package last; with stop >= 0, only
// last's mutators before step stop run, nothing is kept (the pieces
// belong to the real run) and validators are skipped (they change
// nothing).
func (s *streamRenderer) through(i int, nodes []*yaml.RNode, last string, stop int) ([]*yaml.RNode, error) {
	keep := i
	if stop >= 0 {
		keep = -1
	}
	for dir := s.files[i].pkg; ; dir = s.parent[dir] {
		steps := s.steps[dir]
		if len(steps[0]) == 0 && len(steps[1]) == 0 {
			if AreKRM(nodes) != nil {
				return nil, errFallBack
			}
		}
		for k, mutator := range []bool{true, false} {
			for j, st := range steps[k] {
				if dir == last && stop >= 0 && (!mutator || j >= stop) {
					return nodes, nil
				}
				if !mutator && stop >= 0 {
					continue
				}
				if AreKRM(nodes) != nil {
					return nil, errFallBack
				}
				out, err := s.h.step(dir, st.fn, nodes, mutator, applier(st, keep))
				if err != nil {
					return nil, errFallBack
				}
				nodes = out
			}
		}
		if dir == last || dir == "." {
			return nodes, nil
		}
	}
}

// within reports whether file i's resources go through dir's pipeline.
func (s *streamRenderer) within(i int, dir string) bool {
	for d := s.files[i].pkg; ; d = s.parent[d] {
		if d == dir {
			return true
		}
		if d == "." {
			return false
		}
	}
}

// sources collects copies of the resources pick chooses among those step
// stop of dir's mutators (f) is given, in package order: every file of
// dir's tree run through everything before that step.
func (s *streamRenderer) sources(dir string, stop int, f kptfilev1.Function, pick builtins.SourceFunc) ([]*yaml.RNode, error) {
	found := make([][]*yaml.RNode, len(s.files))
	errs := make([]error, len(s.files))
	kptpkg.ForEachParallel(len(s.files), func(i int) {
		if !s.within(i, dir) {
			return
		}
		nodes, err := s.parse(i)
		if err == nil {
			nodes, err = s.through(i, nodes, dir, stop)
		}
		if err == nil {
			_, err = s.h.step(dir, f, nodes, true, func(selected []*yaml.RNode) ([]*yaml.RNode, error) {
				for _, n := range selected {
					if pick(n) {
						c := n.Copy()
						_ = c.PipeE(yaml.ClearAnnotation(ResourceIDAnnotation))
						found[i] = append(found[i], c)
					}
				}
				return selected, nil
			})
		}
		errs[i] = err
	})
	var out []*yaml.RNode
	for i := range found {
		if errs[i] != nil {
			return nil, errFallBack
		}
		out = append(out, found[i]...)
	}
	return out, nil
}

// renderFile runs file i through its package's pipeline and each
// enclosing package's, and returns its new bytes, or nil when what its
// resources mean did not change (the file keeps its bytes).
func (s *streamRenderer) renderFile(i int) ([]byte, error) {
	nodes, err := s.parse(i)
	if err != nil || len(nodes) == 0 {
		return nil, err
	}
	f := s.files[i]
	type place struct {
		path, index string
	}
	before := make([]uint64, len(nodes))
	places := make([]place, len(nodes))
	for j, n := range nodes {
		before[j] = kptpkg.Fingerprint(s.h.seed, n.YNode())
		places[j] = place{kptpkg.FilePath(n), kptpkg.Annotation(n, kioutil.IndexAnnotation)}
	}
	nodes, err = s.through(i, nodes, ".", -1)
	if err != nil {
		return nil, err
	}
	// Every resource must still be where it was read: one that moved to
	// another file or index would meet other files' resources.
	if len(nodes) != len(places) {
		return nil, errFallBack
	}
	for j, n := range nodes {
		if (place{kptpkg.FilePath(n), kptpkg.Annotation(n, kioutil.IndexAnnotation)}) != places[j] || kptpkg.Annotation(n, PkgPathAnnotation) != s.h.abs(f.pkg) {
			return nil, errFallBack
		}
	}
	return s.encode(f, nodes, before)
}

// encode writes a file's rendered resources as the hydrator's write does
// (package-path annotation cleared), or
// returns nil when they mean what they meant before.
func (s *streamRenderer) encode(f streamFile, nodes []*yaml.RNode, before []uint64) ([]byte, error) {
	// The path annotations need no root-relative form here (the
	// hydrator's writer groups resources by them): encodeFile clears them.
	for _, r := range nodes {
		if err := r.PipeE(yaml.ClearAnnotation(PkgPathAnnotation)); err != nil {
			return nil, errFallBack
		}
	}
	if kptpkg.MeansAsRead(s.h.seed, before, nodes) {
		return nil, nil
	}
	for _, n := range nodes {
		if !kptpkg.PlainMetadata(n.YNode()) {
			return nil, errFallBack
		}
	}
	if !kptpkg.AnnotatedForWrite(nodes) {
		return nil, errFallBack
	}
	if err := kptpkg.SortByIndex(nodes); err != nil {
		return nil, errFallBack
	}
	b, err := kptpkg.EncodeFile(nodes, []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation}) //nolint:staticcheck // kio clears both
	if err != nil {
		return nil, errFallBack
	}
	// The encoder's buffer grew by doubling; every changed file is kept
	// until the render ends, so keep only its bytes.
	return append(make([]byte, 0, len(b)), b...), nil
}
