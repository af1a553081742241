package render

import (
	"bytes"
	"context"
	"fmt"
	"hash/maphash"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins"
	"github.com/kptbot/kptbot/engine/kptpkg"
	fnresult "github.com/kptdev/kpt/pkg/api/fnresult/v1"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// PkgPathAnnotation is kpt's annotation tying a resource to its package
// during a render; it never reaches disk.
const PkgPathAnnotation = "internal.config.kubernetes.io/package-path"

// MatchAllKRM is the set of files kpt reads as a package's resources.
var MatchAllKRM = append([]string{kptpkg.KptfileName}, kio.MatchAll...)

// hydrator renders a package tree whose pipelines use only built-in
// functions, handing every function the same parsed nodes instead of
// serializing a ResourceList per function as kpt's runner does (which costs
// ~50x for a built-in pipeline). It follows kpt's renderer step for step:
// subpackages first (depth first), each package's mutators over its own
// resources plus its subpackages' output, validators on a copy, function
// config from configPath or configMap, generated resources tied to the
// package that generated them, paths made relative to the root, files left
// without resources pruned. TestFastRenderMatchesKpt holds it to kpt's
// output byte for byte. Pipelines it does not cover (non-built-in
// functions, BFS order) go to kpt's renderer.
type hydrator struct {
	fsys    filesys.FileSystem
	root    string
	prefix  string
	results *fnresult.ResultList
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
}

// fastRender renders in with the hydrator when every pipeline qualifies;
// ok is false when kpt's renderer must do it.
func fastRender(ctx context.Context, fsys filesys.FileSystem, root string, in kptpkg.Tree, opts RenderOptions) (results *fnresult.ResultList, ok bool, err error) {
	prefix := opts.ImagePrefix
	if prefix == "" {
		prefix = DefaultImagePrefix
	}
	h := &hydrator{fsys: fsys, root: root, prefix: strings.TrimSuffix(prefix, "/"), results: fnresult.NewResultList(), input: map[string]bool{}, fns: map[string]*builtins.Function{}, before: map[string][]uint64{}, seed: maphash.MakeSeed(), maxSteps: opts.StarlarkMaxSteps}
	pkgs, ok := h.qualify(in)
	if !ok {
		return nil, false, nil
	}
	out, err := h.hydrate(ctx, ".", pkgs)
	if err != nil {
		h.results.ExitCode = 1
		return h.results, true, err
	}
	if err := h.write(out); err != nil {
		return h.results, true, err
	}
	return h.results, true, nil
}

// qualify decodes every Kptfile and reports whether all pipelines can run
// on the fast path. It returns the package directories.
func (h *hydrator) qualify(in kptpkg.Tree) (map[string]*kptfilev1.KptFile, bool) {
	pkgs := map[string]*kptfilev1.KptFile{}
	for p, b := range in {
		if bytes.Contains(b, []byte("cnrm.cloud.google.com")) {
			return nil, false // kpt's renderer adds its blueprint attribution to these
		}
		if path.Base(p) != kptpkg.KptfileName {
			continue
		}
		kf, err := kptpkg.DecodeKptfile(p, b)
		if err != nil {
			return nil, false
		}
		dir := path.Dir(p)
		if dir == "." && kf.Annotations[kptfilev1.BFSRenderAnnotation] != "" {
			return nil, false
		}
		if kf.Pipeline != nil {
			for _, f := range append(append([]kptfilev1.Function{}, kf.Pipeline.Mutators...), kf.Pipeline.Validators...) {
				if f.Exec != "" {
					return nil, false
				}
				image := h.resolve(f.Image)
				b, found := builtins.Lookup(image)
				if !found {
					return nil, false
				}
				if f.ConfigPath != "" {
					if _, ok := in[path.Join(dir, f.ConfigPath)]; !ok {
						return nil, false // kpt reports the missing config
					}
				}
				h.fns[image] = b
			}
		}
		pkgs[dir] = kf
	}
	return pkgs, true
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

func (h *hydrator) hydrate(ctx context.Context, dir string, pkgs map[string]*kptfilev1.KptFile) ([]*yaml.RNode, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var input []*yaml.RNode
	for _, sub := range subpackagesOf(dir, pkgs) {
		out, err := h.hydrate(ctx, sub, pkgs)
		if err != nil {
			return nil, fmt.Errorf("pkg %s: %w", "./"+sub, err)
		}
		input = append(input, out...)
	}
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
	input = append(input, local...)
	kf := pkgs[dir]
	if kf.Pipeline == nil || (len(kf.Pipeline.Mutators) == 0 && len(kf.Pipeline.Validators) == 0) {
		if err := AreKRM(input); err != nil {
			return nil, fmt.Errorf("input resource list must contain only KRM resources: %s", err.Error())
		}
		return input, nil
	}
	for _, f := range kf.Pipeline.Mutators {
		if input, err = h.run(ctx, dir, f, input, true); err != nil {
			return nil, fmt.Errorf("pipeline.run: %w", err)
		}
	}
	for _, f := range kf.Pipeline.Validators {
		if _, err := h.run(ctx, dir, f, input, false); err != nil {
			return nil, fmt.Errorf("pipeline.run: %w", err)
		}
	}
	return input, nil
}

// AreKRM is kpt's AreKRM with a fast path: checking apiVersion, kind and
// metadata.name directly avoids decoding every resource's metadata before
// and after every function; kpt's own check produces the error message.
func AreKRM(nodes []*yaml.RNode) error {
	for _, n := range nodes {
		if !looksKRM(n.YNode()) {
			return kptfilev1.AreKRM(nodes)
		}
	}
	return nil
}

func looksKRM(n *yaml.Node) bool {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return false
	}
	var api, kind, name bool
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		switch k {
		case "apiVersion":
			api = v.Kind == yaml.ScalarNode && v.Value != ""
		case "kind":
			kind = v.Kind == yaml.ScalarNode && v.Value != ""
		case "metadata":
			if v.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(v.Content); j += 2 {
					if v.Content[j].Value == "name" {
						name = v.Content[j+1].Kind == yaml.ScalarNode && v.Content[j+1].Value != ""
					}
				}
			}
		}
	}
	return api && kind && name
}

// run executes one function of the package at dir, as kpt's FunctionRunner.
func (h *hydrator) run(ctx context.Context, dir string, f kptfilev1.Function, input []*yaml.RNode, mutator bool) ([]*yaml.RNode, error) {
	image := h.resolve(f.Image)
	b := h.fns[image]
	if err := AreKRM(input); err != nil {
		return nil, fmt.Errorf("input resource list must contain only KRM resources: %s", err.Error())
	}
	// Mutators take their configPath resource from the pipeline's input;
	// validators read it from the package, as kpt's runners do.
	configSource := input
	if !mutator {
		configSource = nil
	}
	config, err := h.config(dir, f, configSource)
	if err != nil {
		return nil, err
	}
	return h.step(dir, f, input, mutator, func(selected []*yaml.RNode) ([]*yaml.RNode, error) {
		var stderr strings.Builder
		output, results, runErr := b.WithContext(ctx).WithStepLimit(h.maxSteps).WithStderr(&stderr).Process(selected, config)
		if runErr != nil {
			// kpt checks a failed function's output (the items it
			// echoes) before its error, recording no result then
			if err := EnforcePathInvariants(output); err != nil {
				return nil, err
			}
		}
		res := functionResult(image, results)
		res.Stderr = stderr.String()
		if runErr != nil {
			res.ExitCode = 1
		}
		h.results.Items = append(h.results.Items, res)
		return output, runErr
	})
}

// step is kpt's FunctionRunner around process, the function itself:
// selection, validators on copies, the outputs tied to the package,
// kpt's checks on the output, and the selected resources' output merged
// back in place.
func (h *hydrator) step(dir string, f kptfilev1.Function, input []*yaml.RNode, mutator bool, process func(selected []*yaml.RNode) ([]*yaml.RNode, error)) ([]*yaml.RNode, error) {
	selecting := len(f.Selectors) > 0 || len(f.Exclusions) > 0
	if selecting && mutator {
		SetResourceIDs(input)
	}
	selected := SelectInput(input, f.Selectors, f.Exclusions)
	// Which resources were selected is read now: a function may leave the
	// nodes it was given changed or emptied.
	var inputIDs []string
	selectedIDs := map[string]bool{}
	if selecting && mutator {
		inputIDs = make([]string, len(input))
		for i, n := range input {
			inputIDs[i] = kptpkg.Annotation(n, ResourceIDAnnotation)
		}
		for _, n := range selected {
			selectedIDs[kptpkg.Annotation(n, ResourceIDAnnotation)] = true
		}
	}
	if !mutator {
		clone := make([]*yaml.RNode, len(selected))
		for i, n := range selected {
			clone[i] = n.Copy()
		}
		selected = clone
	}
	output, err := process(selected)
	if err != nil {
		return nil, err
	}
	for _, n := range output {
		// kpt's function filter gives a resource the function generated
		// without a file its default one, namespace and name as they are
		// now, relative to the function's package (kioutil's rule).
		if kptpkg.FilePath(n) == "" {
			p := kioutil.CreatePathAnnotationValue("", yaml.ResourceMeta{TypeMeta: yaml.TypeMeta{Kind: n.GetKind()}, ObjectMeta: yaml.ObjectMeta{NameMeta: yaml.NameMeta{Name: n.GetName(), Namespace: n.GetNamespace()}}})
			if err := n.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, p)); err != nil {
				return nil, err
			}
			if err := n.PipeE(yaml.SetAnnotation(kioutil.LegacyPathAnnotation, p)); err != nil { //nolint:staticcheck // kpt sets both
				return nil, err
			}
		}
		if kptpkg.Annotation(n, PkgPathAnnotation) == "" {
			if err := n.PipeE(yaml.SetAnnotation(PkgPathAnnotation, h.abs(dir))); err != nil {
				return nil, err
			}
		}
	}
	if err := EnforcePathInvariants(output); err != nil {
		return nil, err
	}
	if err := AreKRM(output); err != nil {
		return nil, fmt.Errorf("output resource list must contain only KRM resources: %s", err.Error())
	}
	if !mutator {
		return input, nil
	}
	if selecting {
		output = MergeWithInput(output, selectedIDs, inputIDs, input)
		for _, n := range output {
			_ = n.PipeE(yaml.ClearAnnotation(ResourceIDAnnotation))
		}
	}
	return output, nil
}

// config builds the functionConfig: the package's own resource at
// configPath (a copy: a function must not edit it through its config), or
// a ConfigMap from configMap, as kpt's runner does.
func (h *hydrator) config(dir string, f kptfilev1.Function, input []*yaml.RNode) (*yaml.RNode, error) {
	switch {
	case f.ConfigPath != "":
		for _, r := range input {
			p, _, _ := kioutil.GetFileAnnotations(r)
			if r.GetAnnotations()[PkgPathAnnotation] == h.abs(dir) && p == f.ConfigPath {
				c := r.Copy()
				for _, a := range []string{PkgPathAnnotation, kioutil.PathAnnotation, kioutil.IndexAnnotation,
					kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation} { //nolint:staticcheck // kpt's runner sends none of these
					_ = c.PipeE(yaml.ClearAnnotation(a))
				}
				if err := yaml.ClearEmptyAnnotations(c); err != nil {
					return nil, err
				}
				return c, nil
			}
		}
		b, err := h.readFile(dir, f.ConfigPath)
		if err != nil {
			return nil, fmt.Errorf("missing function config %q", f.ConfigPath)
		}
		return yaml.Parse(string(b))
	case len(f.ConfigMap) > 0:
		data := f.ConfigMap
		node := yaml.NewMapRNode(&data)
		_ = node.VisitFields(func(n *yaml.MapNode) error {
			v := n.Value.YNode()
			v.Tag = yaml.NodeTagString
			n.Value.SetYNode(v)
			return nil
		})
		cm := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata: {}\n")
		if err := cm.PipeE(yaml.SetField("data", node)); err != nil {
			return nil, err
		}
		return cm, nil
	}
	return nil, nil
}

// readFile reads a file of the package at dir: from the tree when the
// hydrator streams (it has no file system), else from the file system.
func (h *hydrator) readFile(dir, name string) ([]byte, error) {
	if h.fsys == nil {
		b, ok := h.tree[path.Join(dir, filepath.ToSlash(name))]
		if !ok {
			return nil, os.ErrNotExist
		}
		return b, nil
	}
	return h.fsys.ReadFile(filepath.Join(h.abs(dir), name))
}

// functionResult is kpt's record of one function run: its image and what
// it reported.
func functionResult(image string, results sdk.Results) fnresult.Result {
	res := fnresult.Result{Image: image}
	if len(results) > 0 {
		if items, err := toFrameworkResults(results); err == nil {
			res.Results = items
		}
	}
	return res
}

// toFrameworkResults converts the SDK's results to kpt's result type; the
// two are field-for-field the same.
func toFrameworkResults(rs sdk.Results) (framework.Results, error) {
	out := make(framework.Results, 0, len(rs))
	for _, r := range rs {
		if r == nil {
			continue
		}
		fr := &framework.Result{Message: r.Message, Severity: framework.Severity(r.Severity), Tags: r.Tags}
		if r.ResourceRef != nil {
			fr.ResourceRef = &yaml.ResourceIdentifier{
				TypeMeta: yaml.TypeMeta{APIVersion: r.ResourceRef.APIVersion, Kind: r.ResourceRef.Kind},
				NameMeta: yaml.NameMeta{Name: r.ResourceRef.Name, Namespace: r.ResourceRef.Namespace},
			}
		}
		if r.Field != nil {
			fr.Field = &framework.Field{Path: r.Field.Path, CurrentValue: r.Field.CurrentValue, ProposedValue: r.Field.ProposedValue}
		}
		if r.File != nil {
			fr.File = &framework.File{Path: r.File.Path, Index: r.File.Index}
		}
		out = append(out, fr)
	}
	return out, nil
}

// changedOnly drops the resources of files whose resources all mean what
// they meant before the render (same count, order and fingerprints): those
// files keep their bytes, comments and quirks included, and cost nothing
// to write.
func (h *hydrator) changedOnly(resources []*yaml.RNode) []*yaml.RNode {
	byFile := map[string][]*yaml.RNode{}
	for _, r := range resources {
		p := filepath.ToSlash(kptpkg.FilePath(r))
		byFile[p] = append(byFile[p], r)
	}
	unchanged := map[string]bool{}
	for p, rs := range byFile {
		before, ok := h.before[p]
		unchanged[p] = ok && kptpkg.MeansAsRead(h.seed, before, rs)
	}
	out := resources[:0:0]
	for _, r := range resources {
		if !unchanged[filepath.ToSlash(kptpkg.FilePath(r))] {
			out = append(out, r)
		}
	}
	return out
}

// write makes resources' paths relative to the root, writes them as kpt's
// renderer does, and prunes files whose resources are all gone.
func (h *hydrator) write(resources []*yaml.RNode) error {
	outFiles := map[string]bool{}
	for _, r := range resources {
		pkgPath := kptpkg.Annotation(r, PkgPathAnnotation)
		cur := kptpkg.FilePath(r)
		rel := filepath.Clean(cur)
		if pkgPath == h.root && cur != "" {
			// kpt joins the path to the package's, "." for the root: a
			// leading "/" means the package's directory
			rel = filepath.Join(".", rel)
		}
		if pkgPath != "" && pkgPath != h.root {
			sub := strings.TrimPrefix(pkgPath, h.root+"/")
			if sub == pkgPath {
				return fmt.Errorf("resource of package %q is outside the root package", pkgPath)
			}
			rel = filepath.Join(sub, rel)
		}
		if cur != "" {
			if rel != cur {
				if err := r.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, rel)); err != nil {
					return err
				}
				if err := r.PipeE(yaml.SetAnnotation(kioutil.LegacyPathAnnotation, rel)); err != nil { //nolint:staticcheck // kpt sets both
					return err
				}
			}
			outFiles[filepath.ToSlash(rel)] = true
		}
		if kptpkg.AnnotationNode(r.YNode(), PkgPathAnnotation) != nil {
			if err := r.PipeE(yaml.ClearAnnotation(PkgPathAnnotation)); err != nil {
				return err
			}
		}
	}
	resources = h.changedOnly(resources)
	// kpt writes through kio.LocalPackageReadWriter, which writes as
	// LocalPackageWriter and deletes nothing it did not read.
	if err := kptpkg.WritePackage(filesys.FileSystemOrOnDisk{FileSystem: h.fsys}, h.root, resources, nil); err != nil {
		return fmt.Errorf("failed to save resources: %w", err)
	}
	for f := range h.input {
		if !outFiles[f] {
			if err := h.fsys.RemoveAll(filepath.Join(h.root, filepath.FromSlash(f))); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("failed to delete file: %w", err)
			}
		}
	}
	return nil
}
