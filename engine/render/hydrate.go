package render

import (
	"bytes"
	"context"
	"fmt"
	"hash/maphash"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins"
	"github.com/kptbot/kptbot/engine/fnresults"
	"github.com/kptbot/kptbot/engine/kptpkg"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// PkgPathAnnotation is kpt's annotation tying a resource to its package
// during a render; it never reaches disk.
const PkgPathAnnotation = "internal.config.kubernetes.io/package-path"

// MatchAllKRM is the set of files kpt reads as a package's resources.
var MatchAllKRM = append([]string{kptpkg.KptfileName}, kio.MatchAll...)

// hydrator renders a package tree as kpt's renderer does, handing every
// built-in function the same parsed nodes instead of serializing a
// ResourceList per function as kpt's runner does (which costs ~50x for a
// built-in pipeline); exec and container functions run as processes over
// the ResourceList wire protocol (engine/fnrun). It follows kpt's renderer
// step for step: subpackages' pipelines first (depth first), or top-down
// with the root's kpt.dev/bfs-rendering annotation; each package's Kptfile
// and pipeline validated as kpt does; each package's mutators over its own
// resources followed by its subpackages' output (beta.67's order),
// validators on a copy, function
// config from configPath or configMap, generated resources tied to the
// package that generated them, paths made relative to the root, Config
// Connector resources attributed, files left without resources pruned.
// TestFastRenderMatchesKpt holds it to kpt's output byte for byte.
type hydrator struct {
	fsys    filesys.FileSystem
	root    string
	prefix  string
	opts    RenderOptions
	results *fnresults.List
	input   map[string]bool // files that held resources before the render
	fns     map[string]*builtins.Function
	// before holds, per file (relative to the root), the fingerprints of
	// its resources as read, so unchanged files are not rewritten.
	before map[string][]uint64
	seed   maphash.Seed
	// tree is the package when fsys is nil (streamRender).
	tree kptpkg.Tree
	// maxSteps bounds starlark scripts (RenderOptions.StarlarkMaxSteps).
	maxSteps uint64
	// local holds each package's own resources as read (ValidatePipeline).
	local map[string][]*yaml.RNode
	// engineChecked: the container engine answered once this render.
	engineChecked bool
}

// fastRender renders in with the hydrator.
func fastRender(ctx context.Context, fsys filesys.FileSystem, root string, in kptpkg.Tree, opts RenderOptions) (*fnresults.List, error) {
	prefix := opts.ImagePrefix
	if prefix == "" {
		prefix = DefaultImagePrefix
	}
	h := &hydrator{fsys: fsys, root: root, prefix: strings.TrimSuffix(prefix, "/"), opts: opts, results: fnresults.NewList(), input: map[string]bool{},
		fns: map[string]*builtins.Function{}, before: map[string][]uint64{}, seed: maphash.MakeSeed(), maxSteps: opts.StarlarkMaxSteps, local: map[string][]*yaml.RNode{}}
	pkgs, _, err := h.qualify(in, opts.kptfiles)
	if err != nil {
		return nil, err
	}
	if err := h.validateKptfile(".", pkgs["."]); err != nil {
		return nil, &pkgReadError{err}
	}
	var out []*yaml.RNode
	if pkgs["."].Annotations[kptfilev1.BFSRenderAnnotation] == "true" {
		out, err = h.hydrateBFS(ctx, pkgs)
	} else {
		out, err = h.hydrate(ctx, ".", pkgs)
	}
	if err != nil {
		return h.results, err
	}
	if err := h.write(out); err != nil {
		return h.results, err
	}
	return h.results, nil
}

// pkgReadError is the root package's Kptfile failing kpt's validation,
// which kpt reports before the render starts.
type pkgReadError struct{ err error }

func (e *pkgReadError) Error() string { return e.err.Error() }
func (e *pkgReadError) Unwrap() error { return e.err }

// qualify decodes every Kptfile and records the built-in functions the
// pipelines use. It returns the package directories, and whether the
// streamed render may take the package: every function a built-in, depth
// first order, every configPath present and not possibly .krmignore'd,
// no Config Connector resource (the whole-list render attributes those).
func (h *hydrator) qualify(in kptpkg.Tree, kfs *kptpkg.Kptfiles) (map[string]*kptfilev1.KptFile, bool, error) {
	pkgs := map[string]*kptfilev1.KptFile{}
	streams, ignores, configPaths := true, false, false
	for p, b := range in {
		if underVCSDir(p) || strings.HasPrefix(p, ".git/") {
			continue
		}
		if path.Base(p) == ".krmignore" {
			ignores = true
		}
		if bytes.Contains(b, []byte("cnrm.cloud.google.com")) {
			streams = false
		}
		if path.Base(p) != kptpkg.KptfileName {
			continue
		}
		kf, err := kfs.Decode(p, b)
		if err != nil {
			return nil, false, err
		}
		dir := path.Dir(p)
		if dir == "." && kf.Annotations[kptfilev1.BFSRenderAnnotation] != "" {
			streams = false
		}
		if kf.Pipeline != nil {
			for _, f := range append(append([]kptfilev1.Function{}, kf.Pipeline.Mutators...), kf.Pipeline.Validators...) {
				if f.Exec != "" {
					streams = false
					continue
				}
				image := h.resolve(f.Image)
				b, found := builtins.Lookup(image)
				if !found {
					streams = false
					continue
				}
				if f.ConfigPath != "" {
					configPaths = true
					if _, ok := in[path.Join(dir, f.ConfigPath)]; !ok {
						streams = false
					}
				}
				h.fns[image] = b
			}
		}
		pkgs[dir] = kf
	}
	if pkgs["."] == nil {
		return nil, false, fmt.Errorf("no Kptfile at the package root: not a kpt package")
	}
	// kpt's ValidatePipeline: a configPath must name a file the package
	// reader reads, which the whole-list render checks
	return pkgs, streams && !(ignores && configPaths), nil
}

func (h *hydrator) resolve(image string) string {
	if image != "" && !strings.Contains(image, "/") {
		return h.prefix + "/" + image
	}
	return image
}

// subpackagesOf lists the direct subpackages of dir, sorted.
func subpackagesOf(dir string, pkgs map[string]*kptfilev1.KptFile) []string {
	var out []string
	for p := range pkgs {
		if p == dir || (dir != "." && !strings.HasPrefix(p, dir+"/")) {
			continue
		}
		parent := path.Dir(p)
		for parent != "." && parent != dir {
			if _, ok := pkgs[parent]; ok {
				break
			}
			parent = path.Dir(parent)
		}
		if parent == dir {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func (h *hydrator) abs(dir string) string {
	if dir == "." {
		return h.root
	}
	return h.root + "/" + dir
}

// hydrate is kpt's depth-first hydration of the package at dir, as
// beta.67 orders it: the package's own resources read first (so a read
// error there is reported before any subpackage runs), then each direct
// subpackage hydrated (validated as kpt reads it) and its output appended,
// then the package's pipeline over both. Its input is therefore the
// package's own resources followed by its subpackages' output; kpt up to
// beta.61 put the subpackages' output first (TestRenderInputOrder).
func (h *hydrator) hydrate(ctx context.Context, dir string, pkgs map[string]*kptfilev1.KptFile) ([]*yaml.RNode, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var input []*yaml.RNode
	if !h.opts.subpackagesFirst {
		local, err := h.readLocal(dir)
		if err != nil {
			return nil, err
		}
		input = append(input, local...)
	}
	for _, sub := range subpackagesOf(dir, pkgs) {
		if err := h.validateKptfile(sub, pkgs[sub]); err != nil {
			return nil, fmt.Errorf("pkg %s: pkg.read: %w", "./"+sub, err)
		}
		out, err := h.hydrate(ctx, sub, pkgs)
		if err != nil {
			return nil, fmt.Errorf("pkg %s: %w", "./"+sub, err)
		}
		input = append(input, out...)
	}
	if h.opts.subpackagesFirst {
		local, err := h.readLocal(dir)
		if err != nil {
			return nil, err
		}
		input = append(input, local...)
	}
	return h.runPipeline(ctx, dir, pkgs[dir], input)
}

// readLocal reads the package's own resources, tied to it by
// PkgPathAnnotation, and records them as the render's input.
func (h *hydrator) readLocal(dir string) ([]*yaml.RNode, error) {
	r := &kio.LocalPackageReader{
		PackagePath:       h.abs(dir),
		PackageFileName:   kptpkg.KptfileName,
		MatchFilesGlob:    MatchAllKRM,
		PreserveSeqIndent: true,
		SetAnnotations:    map[string]string{PkgPathAnnotation: h.abs(dir)},
		WrapBareSeqNode:   true,
		FileSystem:        filesys.FileSystemOrOnDisk{FileSystem: h.fsys},
	}
	local, err := kptpkg.ReadPackage(*r)
	if err != nil {
		return nil, err
	}
	for _, n := range local {
		rel := path.Join(dir, filepath.ToSlash(kptpkg.FilePath(n)))
		h.input[rel] = true
		h.before[rel] = append(h.before[rel], kptpkg.Fingerprint(h.seed, n.YNode()))
	}
	h.local[dir] = local
	return local, nil
}

// runPipeline is kpt's runPipeline: an empty pipeline only checks its
// input is KRM; otherwise the pipeline is validated against the
// package's own resources, then the mutators run (all of them prepared
// first, as kpt does), then the validators.
func (h *hydrator) runPipeline(ctx context.Context, dir string, kf *kptfilev1.KptFile, input []*yaml.RNode) ([]*yaml.RNode, error) {
	if kf.Pipeline == nil || (len(kf.Pipeline.Mutators) == 0 && len(kf.Pipeline.Validators) == 0) {
		if err := AreKRM(input); err != nil {
			return nil, fmt.Errorf("input resource list must contain only KRM resources: %s", err.Error())
		}
		return input, nil
	}
	if err := validatePipeline(kf.Pipeline, h.local[dir]); err != nil {
		return nil, err
	}
	mutators := make([]*prepared, len(kf.Pipeline.Mutators))
	for i, f := range kf.Pipeline.Mutators {
		p, err := h.prepare(ctx, dir, f)
		if err != nil {
			return nil, fmt.Errorf("pipeline.run: %w", err)
		}
		mutators[i] = p
	}
	var err error
	for _, p := range mutators {
		if input, err = h.run(ctx, dir, p, input, true); err != nil {
			return nil, fmt.Errorf("pipeline.run: %w", err)
		}
	}
	for _, f := range kf.Pipeline.Validators {
		p, err := h.prepare(ctx, dir, f)
		if err != nil {
			return nil, fmt.Errorf("pipeline.run: %w", err)
		}
		if _, err := h.run(ctx, dir, p, input, false); err != nil {
			return nil, fmt.Errorf("pipeline.run: %w", err)
		}
	}
	return input, nil
}
