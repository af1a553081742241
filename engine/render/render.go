package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"github.com/kptdev/kpt/pkg/kptfile/kptfileutil"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/fnresults"
	"github.com/kptbot/kptbot/engine/kptpkg"
)

// DefaultImagePrefix is prepended to unqualified function images, as kpt.
const DefaultImagePrefix = "ghcr.io/kptdev/krm-functions-catalog/"

// KptRenderer renders the package at root of fsys with kpt's own renderer
// when RenderOptions.KptOnly asks for it. Only tests set it (to kpt's
// kptops, which links client-go and kubectl: the binary must not), to hold
// kptbot's hydrator to kpt's output.
var KptRenderer func(ctx context.Context, fsys filesys.FileSystem, root string, opts RenderOptions) (*fnresults.List, error)

// Condition values kpt records after a render.
const (
	ConditionRendered = "Rendered"
	ReasonSuccess     = "RenderSuccess"
	ReasonFailed      = "RenderFailed"
)

// RenderOptions configures Render.
type RenderOptions struct {
	Runtimes
	// ImagePrefix qualifies images without a registry (default: the kpt
	// catalog's ghcr.io prefix).
	ImagePrefix string

	// StarlarkMaxSteps bounds each starlark script of the render (0: the
	// built-in's default, which grows with the package). The render's
	// context bounds it in time.
	StarlarkMaxSteps uint64

	// Dir names the package in messages: a Kptfile at fault is named
	// Dir/Kptfile (Render sets it to the package's directory).
	Dir string

	// KptOnly renders with KptRenderer instead of kptbot's hydrator
	// (tests compare the two).
	KptOnly bool
	// WholeList skips the streamed render (tests compare the two).
	WholeList bool

	// subpackagesFirst orders each package's pipeline input as kpt up to
	// beta.61 did (subpackages' output, then the package's own resources),
	// in the whole-list render only. Only the tests comparing kptbot with
	// kpt's Go module, which is beta.61 here, set it, on the cases whose
	// output depends on that order (TestFastRenderMatchesKpt).
	subpackagesFirst bool

	kptfiles *kptpkg.Kptfiles // the render's Kptfiles, decoded once
}

// RenderResult is the outcome of a render.
type RenderResult struct {
	// Results are the functions' structured results, as kpt's
	// FunctionResultList.
	Results *fnresults.List
	// Tree is the rendered package.
	Tree kptpkg.Tree
	// Added, Removed and Modified list changed files.
	Added, Removed, Modified []string
}

// RenderTree hydrates a package held in memory: subpackages first, then
// the package's mutators and validators, exactly as `kpt fn render`, in
// kptbot's hydrator (built-ins in process, exec and container functions
// as processes; see hydrator), streamed file by file when the pipelines
// allow. The input tree is not modified.
func RenderTree(ctx context.Context, in kptpkg.Tree, opts RenderOptions) (*RenderResult, error) {
	if _, ok := in[kptpkg.KptfileName]; !ok {
		return nil, fmt.Errorf("no Kptfile at the package root: not a kpt package")
	}
	if opts.kptfiles == nil {
		opts.kptfiles = &kptpkg.Kptfiles{}
	}
	if err := checkKptfiles(in, opts.Dir, opts.kptfiles); err != nil {
		return nil, err
	}
	if !opts.KptOnly && !opts.WholeList && !opts.subpackagesFirst {
		out, results, ok, err := streamRender(ctx, in, opts)
		if err != nil {
			return nil, err
		}
		if ok {
			res := &RenderResult{Results: results, Tree: out}
			res.Added, res.Removed, res.Modified = in.Changes(out)
			return res, nil
		}
	}
	const root = "/pkg"
	fsys, err := in.MemFS(root)
	if err != nil {
		return nil, err
	}
	var results *fnresults.List
	if opts.KptOnly {
		if KptRenderer == nil {
			return nil, errors.New("RenderOptions.KptOnly: no KptRenderer (tests install kpt's)")
		}
		results, err = KptRenderer(ctx, fsys, root, opts)
	} else {
		results, err = fastRender(ctx, fsys, root, in, opts)
		var rootRead *pkgReadError
		if errors.As(err, &rootRead) {
			err = fmt.Errorf("fn.render: pkg .:\n\tpkg.read: %w", rootRead.err)
		} else if err != nil {
			err = fmt.Errorf("fn.render: pkg .:\n\tpkg.render:\n\t%w", err)
		}
	}
	if err != nil {
		// Name a YAML file that is not KRM precisely; kpt's message about
		// it is terse. Checked only on failure: parsing is the render's cost.
		cleaned := cleanRenderError(err, root)
		if kerr := CheckKRM(in); kerr != nil {
			return &RenderResult{Results: results}, &RenderError{Err: kerr, Results: results, recorded: cleaned}
		}
		return &RenderResult{Results: results}, &RenderError{Err: cleaned, Results: results}
	}
	out, err := kptpkg.ReadFS(fsys, root)
	if err != nil {
		return nil, fmt.Errorf("reading rendered package: %w", err)
	}
	if opts.KptOnly {
		kptpkg.PreserveUntouched(in, out) // the hydrator writes only changed files
	}
	res := &RenderResult{Results: results, Tree: out}
	res.Added, res.Removed, res.Modified = in.Changes(out)
	return res, nil
}

// checkKptfiles decodes every Kptfile of the package, naming the one at
// fault by its path under dir. A subpackage whose Kptfile cannot be read
// fails the render, as in kpt, rather than being skipped (its resources
// would silently escape its pipeline and the root's); that failure is a
// RenderError, which kpt records in the root Kptfile.
func checkKptfiles(in kptpkg.Tree, dir string, kfs *kptpkg.Kptfiles) error {
	for _, p := range in.Paths() {
		if path.Base(p) != kptpkg.KptfileName || underVCSDir(p) {
			continue
		}
		if _, err := kfs.Decode(path.Join(filepath.ToSlash(dir), p), in[p]); err != nil {
			if p == kptpkg.KptfileName {
				return err
			}
			sub := path.Dir(p)
			raw := err
			if b, serr := kptpkg.WithoutRenderStatus(in[p]); serr == nil {
				if _, derr := kptfileutil.DecodeKptfile(bytes.NewReader(b)); derr != nil {
					raw = derr
				}
			}
			return &RenderError{Err: fmt.Errorf("subpackage %s: %w", sub, err),
				recorded: fmt.Errorf("fn.render: pkg .:\n\tpkg.render:\n\tpkg.Subpackages: pkg ./%s: error reading Kptfile at \"./%s\": %w", sub, sub, raw)}
		}
	}
	return nil
}

// underVCSDir reports whether p lies in a .git directory, which kpt's
// subpackage walk skips.
func underVCSDir(p string) bool {
	for _, part := range strings.Split(path.Dir(p), "/") {
		if part == ".git" {
			return true
		}
	}
	return false
}

// RenderError is a failed render: the message says which function failed
// and why; Results holds what the functions reported.
type RenderError struct {
	Err     error
	Results *fnresults.List
	// recorded is kpt's own error, which the Kptfile records, when Err
	// says it better.
	recorded error
}

// kptError is the error as kpt reports it.
func (e *RenderError) kptError() error {
	if e.recorded != nil {
		return e.recorded
	}
	return e.Err
}

func (e *RenderError) Error() string { return e.Err.Error() }
func (e *RenderError) Unwrap() error { return e.Err }

func cleanRenderError(err error, root string) error {
	msg := strings.ReplaceAll(err.Error(), root+"/", "./")
	msg = strings.ReplaceAll(msg, root, ".")
	return fmt.Errorf("%s", msg)
}

// CheckKRM rejects YAML files that are not KRM resources, as kpt does, with
// the file and document named. Only the package's content counts: files
// kpt's package reader skips (.krmignore'd ones, such as kpt's own
// .expected test directories, and VCS metadata) are not resources.
func CheckKRM(t kptpkg.Tree) error {
	read, err := packageContent(t)
	if err != nil {
		return err
	}
	for _, p := range t.Paths() {
		if !read[p] || (!strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml")) {
			continue
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(t[p]), PreserveSeqIndent: true, WrapBareSeqNode: true}).Read()
		if err != nil {
			return fmt.Errorf("%s: not valid YAML: %w", p, err)
		}
		for i, n := range nodes {
			// kpt's IsKRM lets kustomization files through
			if slices.Contains(konfig.RecognizedKustomizationFileNames(), path.Base(p)) {
				break
			}
			if n.GetApiVersion() == "" || n.GetKind() == "" {
				return fmt.Errorf("%s: document %d is not a KRM resource (apiVersion and kind are required); kpt packages may hold only KRM resources in .yaml files", p, i)
			}
		}
	}
	return nil
}

// packageContent lists the files of t that kpt's package reader reads
// (the package and its subpackages, .krmignore honoured, VCS metadata
// left out), walking a file system of names only.
func packageContent(t kptpkg.Tree) (map[string]bool, error) {
	const root = "/pkg"
	names := filesys.MakeFsInMemory()
	if err := names.MkdirAll(root); err != nil {
		return nil, err
	}
	for p, b := range t {
		if underVCSDir(p) || strings.HasPrefix(p, ".git/") {
			continue
		}
		full := path.Join(root, p)
		if err := names.MkdirAll(path.Dir(full)); err != nil {
			return nil, err
		}
		var content []byte
		if path.Base(p) == ".krmignore" {
			content = b
		}
		if err := names.WriteFile(full, content); err != nil {
			return nil, err
		}
	}
	_, rels, err := kptpkg.ListPackageFiles(kio.LocalPackageReader{PackagePath: root, PackageFileName: kptpkg.KptfileName,
		IncludeSubpackages: true, MatchFilesGlob: MatchAllKRM, FileSystem: filesys.FileSystemOrOnDisk{FileSystem: names}})
	if err != nil {
		return nil, fmt.Errorf("listing the package's files: %w", err)
	}
	out := make(map[string]bool, len(rels))
	for _, r := range rels {
		out[filepath.ToSlash(r)] = true
	}
	return out, nil
}

// Render renders the package at dir in place, as `kpt fn render`. The
// package on disk changes only if the whole pipeline succeeds; either way
// the root Kptfile records the Rendered condition, as kpt does.
func Render(ctx context.Context, dir string, opts RenderOptions) (*RenderResult, error) {
	have, err := kptpkg.ReadTree(dir)
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		opts.Dir = dir
	}
	opts.kptfiles = &kptpkg.Kptfiles{}
	res, rerr := RenderTree(ctx, have, opts)
	if rerr != nil {
		rerr = fmt.Errorf("rendering %s: %w", dir, rerr)
		var re *RenderError
		if !errors.As(rerr, &re) || !recordsStatus(re.kptError()) {
			return res, rerr
		}
		base := have
		if partial := savedOnFailure(ctx, have, opts); partial != nil {
			base = partial
			if err := kptpkg.SyncDir(dir, have, partial); err != nil {
				return res, fmt.Errorf("%w (and saving the partially rendered package failed: %v)", rerr, err)
			}
		}
		if err := recordRendered(ctx, dir, have, base, opts, re); err != nil {
			return res, fmt.Errorf("%w (and recording the Rendered condition failed: %v)", rerr, err)
		}
		return res, rerr
	}
	rs := buildRenderStatus(ctx, have, opts, res.Results, nil)
	b, err := withRenderStatus(opts.kptfiles, res.Tree[kptpkg.KptfileName], kptfilev1.Condition{Type: ConditionRendered, Status: kptfilev1.ConditionTrue, Reason: ReasonSuccess}, rs)
	if err != nil {
		return res, err
	}
	res.Tree[kptpkg.KptfileName] = b
	res.Added, res.Removed, res.Modified = have.Changes(res.Tree)
	if err := kptpkg.SyncDir(dir, have, res.Tree); err != nil {
		return res, fmt.Errorf("writing rendered package to %s: %w", dir, err)
	}
	return res, nil
}

// SaveOnRenderFailureAnnotation on the root Kptfile asks, as in kpt, that
// a failed render still writes what the pipeline produced before failing.
const SaveOnRenderFailureAnnotation = "kpt.dev/save-on-render-failure"

// savedOnFailure returns the package as rendered by the longest prefix of
// the root pipeline that succeeds (all mutators without the validators,
// then fewer and fewer mutators, down to none: the root's input, its
// subpackages rendered), when the root Kptfile opts in with
// SaveOnRenderFailureAnnotation; nil otherwise. As in kpt beta.67, a root
// mutator that cannot start fails the pipeline before any mutator runs,
// so the root's input is what is saved. kpt's library stops at the first
// failure without handing back intermediate resources, so the prefix is
// re-rendered; this costs time only on failure.
func savedOnFailure(ctx context.Context, have kptpkg.Tree, opts RenderOptions) kptpkg.Tree {
	kf, err := kptpkg.DecodeKptfile(kptpkg.KptfileName, have[kptpkg.KptfileName])
	if err != nil || kf.Annotations[SaveOnRenderFailureAnnotation] != "true" || kf.Pipeline == nil {
		return nil
	}
	muts := kf.Pipeline.Mutators
	longest := len(muts)
	for _, f := range muts {
		if !startable(ctx, f, opts) {
			longest = 0
			break
		}
	}
	for n := longest; n >= 0; n-- {
		trial := kptpkg.Tree{}
		for p, b := range have {
			trial[p] = b
		}
		b, err := withPipelinePrefix(have[kptpkg.KptfileName], n)
		if err != nil {
			return nil
		}
		trial[kptpkg.KptfileName] = b
		res, err := RenderTree(ctx, trial, opts)
		if err != nil {
			continue
		}
		// The saved package keeps its full pipeline.
		res.Tree[kptpkg.KptfileName] = restorePipeline(res.Tree[kptpkg.KptfileName], have[kptpkg.KptfileName])
		return res.Tree
	}
	return nil
}

// withPipelinePrefix keeps the first n mutators and no validators.
func withPipelinePrefix(kptfile []byte, n int) ([]byte, error) {
	return kptpkg.EditKptfile(kptfile, func(kf *yaml.RNode) error {
		if m, err := kf.Pipe(yaml.Lookup("pipeline", "mutators")); err == nil && m != nil {
			m.YNode().Content = m.YNode().Content[:n]
		}
		if p, err := kf.Pipe(yaml.Lookup("pipeline")); err == nil && p != nil {
			_, err := p.Pipe(yaml.Clear("validators"))
			return err
		}
		return nil
	})
}

// restorePipeline puts the original pipeline back into a rendered Kptfile
// (whose metadata the functions may have changed).
func restorePipeline(rendered, original []byte) []byte {
	o, err := yaml.Parse(string(original))
	if err != nil {
		return original
	}
	b, err := kptpkg.EditKptfile(rendered, func(kf *yaml.RNode) error {
		if p := o.Field("pipeline"); p != nil {
			return kf.PipeE(yaml.SetField("pipeline", p.Value))
		}
		return nil
	})
	if err != nil {
		return original
	}
	return b
}

// recordRendered writes the failed render's condition and render status
// into the root Kptfile of base (the package as it stays on disk), as kpt.
func recordRendered(ctx context.Context, dir string, in, base kptpkg.Tree, opts RenderOptions, re *RenderError) error {
	rs := buildRenderStatus(ctx, in, opts, re.Results, re.kptError())
	b, err := withRenderStatus(opts.kptfiles, base[kptpkg.KptfileName], kptfilev1.Condition{Type: ConditionRendered, Status: kptfilev1.ConditionFalse, Reason: ReasonFailed, Message: renderedMessage(re.kptError(), dir, rs)}, rs)
	if err != nil {
		return err
	}
	return kptpkg.SyncDir(dir, kptpkg.Tree{kptpkg.KptfileName: base[kptpkg.KptfileName]}, kptpkg.Tree{kptpkg.KptfileName: b})
}

// WriteResults writes results as results.yaml in dir, as kpt's --results-dir.
func WriteResults(dir string, results *fnresults.List) (string, error) {
	if results == nil {
		results = fnresults.NewList()
	}
	var buf bytes.Buffer
	e := yaml.NewEncoderWithOptions(&buf, &yaml.EncoderOptions{SeqIndent: yaml.WideSequenceStyle})
	if err := e.Encode(results); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "results.yaml")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("writing results: %w", err)
	}
	return p, nil
}

// WriteResources writes the KRM resources of t to w, wrapped in a
// ResourceList (wrap) or as a YAML stream, as `kpt fn render -o stdout|unwrap`.
func WriteResources(w io.Writer, t kptpkg.Tree, wrap bool) error {
	var nodes []*yaml.RNode
	for _, p := range t.Paths() {
		if !strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml") && filepath.Base(p) != kptpkg.KptfileName {
			continue
		}
		rd := &kio.ByteReader{Reader: bytes.NewReader(t[p]), PreserveSeqIndent: true, WrapBareSeqNode: true,
			SetAnnotations: map[string]string{kioutil.PathAnnotation: p}}
		ns, err := rd.Read()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		nodes = append(nodes, ns...)
	}
	bw := &kio.ByteWriter{Writer: w, KeepReaderAnnotations: true}
	if wrap {
		bw.WrappingAPIVersion = kio.ResourceListAPIVersion
		bw.WrappingKind = kio.ResourceListKind
	}
	return bw.Write(nodes)
}
