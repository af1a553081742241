package fneval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/builtins"
	"github.com/kptbot/kptbot/engine/fnresults"
	"github.com/kptbot/kptbot/engine/fnrun"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/render"
)

// EvalOptions configures an eval: one function over a package's resources,
// as `kpt fn eval`.
type EvalOptions struct {
	render.Runtimes
	// Image or Exec names the function (exactly one). Exec may carry
	// arguments ("./fn --flag"), split as a shell would, as kpt does.
	Image, Exec string
	// Tag is kpt's --tag for Image: an exact version or tag replaces the
	// image's tag; a semantic version constraint (~0.4, ^0.2, >=0.1 <0.3)
	// picks the highest built-in version line it admits.
	Tag string
	// FnConfig is the function config file's content (optional).
	FnConfig []byte
	// FnConfigName names FnConfig in errors.
	FnConfigName string
	// Args are kpt's function arguments (after --): key=value pairs become
	// the data of a ConfigMap function config; a first argument without
	// "=" names the config's kind instead. Used when FnConfig is empty.
	Args []string
	// ImagePrefix qualifies images without a registry.
	ImagePrefix string
	// Selector and Exclusion restrict the resources the function sees
	// (kpt's --match-* and --exclude-* flags); the others pass through.
	Selector, Exclusion kptfilev1.Selector
	// Container holds the options that only a container engine can honour.
	Container ContainerOptions
}

// EvalResult is the outcome of an eval.
type EvalResult struct {
	// Results is kpt's FunctionResultList for the one function.
	Results *fnresults.List
	// Function names the function as kpt prints it (image or exec).
	Function string
	// Selected is how many resources the function was given, when a
	// selector or exclusion was set (-1 otherwise).
	Selected int
	// Resources are the output resources, with kpt's path and index
	// annotations, in kpt's order (for -o and standard output).
	Resources []*yaml.RNode
	// Tree is the package after the eval (nil when reading a stream).
	Tree kptpkg.Tree
	// Added, Removed and Modified list changed files.
	Added, Removed, Modified []string
}

// Eval runs one function over every resource of the package at dir
// (subpackages included), as `kpt fn eval`, and writes the result back
// only if the function succeeds.
func Eval(ctx context.Context, dir string, opts EvalOptions) (*EvalResult, error) {
	have, err := kptpkg.ReadTree(dir)
	if err != nil {
		return nil, err
	}
	res, err := EvalTree(ctx, have, opts)
	if err != nil {
		return res, err
	}
	return res, kptpkg.SyncDir(dir, have, res.Tree)
}

// EvalTree runs one function over a package held in memory; in is not
// modified. On failure the result still carries the function's results.
func EvalTree(ctx context.Context, in kptpkg.Tree, opts EvalOptions) (*EvalResult, error) {
	run, err := newEvalRun(ctx, opts)
	if err != nil {
		return nil, err
	}
	// Non-KRM content is refused as kpt's runner refuses it, when the
	// function is given its input (its [FAIL] line and message), not
	// while reading.
	const root = "/pkg"
	fsys, err := in.MemFS(root)
	if err != nil {
		return nil, err
	}
	// The same reader writes the output back, so files whose resources
	// the function removed are deleted, as kpt does.
	rw := &kio.LocalPackageReadWriter{
		PackagePath:        root,
		PreserveSeqIndent:  true,
		WrapBareSeqNode:    true,
		IncludeSubpackages: true,
		PackageFileName:    kptpkg.KptfileName,
		MatchFilesGlob:     append([]string{kptpkg.KptfileName}, kio.MatchAll...),
		FileSystem:         filesys.FileSystemOrOnDisk{FileSystem: fsys},
	}
	input, err := rw.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the package: %w", err)
	}
	res, err := run.apply(input)
	if err != nil {
		return res, err
	}
	if err := rw.Write(copyNodes(res.Resources)); err != nil {
		return res, fmt.Errorf("writing the package: %w", err)
	}
	out, err := kptpkg.ReadFS(fsys, root)
	if err != nil {
		return res, err
	}
	kptpkg.PreserveUntouched(in, out)
	res.Tree = out
	res.Added, res.Removed, res.Modified = in.Changes(out)
	return res, nil
}

// EvalReader runs one function over resources read from r: a YAML stream
// or a ResourceList (its items), as `kpt fn eval -`.
func EvalReader(ctx context.Context, r io.Reader, opts EvalOptions) (*EvalResult, error) {
	run, err := newEvalRun(ctx, opts)
	if err != nil {
		return nil, err
	}
	input, err := (&kio.ByteReader{Reader: r, PreserveSeqIndent: true, WrapBareSeqNode: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("reading resources from standard input: %w", err)
	}
	return run.apply(input)
}

// builtinRunner runs a built-in as kpt runs the catalog's container: what
// it prints and, when it fails, the SDK's failure line are its stderr, and
// a failure is exit code 1.
func builtinRunner(b *builtins.Function, image string, stderr *strings.Builder) func(io.Reader, io.Writer) error {
	return func(in io.Reader, out io.Writer) error {
		var printed strings.Builder
		err := b.WithStderr(&printed).Run(in, out)
		stderr.WriteString(builtins.ContainerStderr(printed.String(), err != nil))
		if err != nil {
			return &FunctionExitError{Function: image, ExitCode: 1, Stderr: stderr.String()}
		}
		return nil
	}
}

// copyNodes lets the package writer consume annotations without touching
// the nodes the caller keeps for -o output.
func copyNodes(nodes []*yaml.RNode) []*yaml.RNode {
	out := make([]*yaml.RNode, len(nodes))
	for i, n := range nodes {
		out[i] = n.Copy()
	}
	return out
}

// evalRun is one prepared eval: the function, its config and selection.
type evalRun struct {
	opts   EvalOptions
	name   string
	run    func(io.Reader, io.Writer) error
	stderr func() string
	config *yaml.RNode
}

func newEvalRun(ctx context.Context, opts EvalOptions) (*evalRun, error) {
	if (opts.Image == "") == (opts.Exec == "") {
		return nil, fmt.Errorf("exactly one of --image and --exec must be given")
	}
	cfg, err := evalConfig(opts)
	if err != nil {
		return nil, err
	}
	r := &evalRun{opts: opts, config: cfg}
	if err := r.pickRunner(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// apply is kpt's runfn: selection, the function, its output checks and
// structured results, and the selected resources merged back in place.
func (r *evalRun) apply(input []*yaml.RNode) (*EvalResult, error) {
	res := &EvalResult{Function: r.name, Selected: -1, Results: fnresults.NewList()}
	selecting := !r.opts.Selector.IsEmpty() || !r.opts.Exclusion.IsEmpty()
	selected := input
	var inputIDs []string
	selectedIDs := map[string]bool{}
	if selecting {
		render.SetResourceIDs(input)
		selected = render.SelectInput(input, []kptfilev1.Selector{r.opts.Selector}, []kptfilev1.Selector{r.opts.Exclusion})
		inputIDs = make([]string, len(input))
		for i, n := range input {
			inputIDs[i] = kptpkg.Annotation(n, render.ResourceIDAnnotation)
		}
		for _, n := range selected {
			selectedIDs[kptpkg.Annotation(n, render.ResourceIDAnnotation)] = true
		}
		res.Selected = len(selected)
	}
	item := fnresults.Result{Image: r.opts.Image, ExecPath: r.opts.Exec}
	if r.opts.Image != "" {
		item.Image = r.name
	}
	pb := &kio.PackageBuffer{}
	err := kio.Pipeline{
		Inputs:  []kio.Reader{&kio.PackageBuffer{Nodes: selected}},
		Filters: []kio.Filter{kio.FilterFunc(func(in []*yaml.RNode) ([]*yaml.RNode, error) { return r.filter(in, &item) })},
		Outputs: []kio.Writer{pb},
		// fn eval removes every file when the function deletes every
		// resource, as kpt's eval does.
		ContinueOnEmptyResult: true,
	}.Execute()
	res.Results.Items = append(res.Results.Items, item)
	if err != nil {
		res.Results.ExitCode = 1
		// kpt prints its runner's errors as they are and nothing for a
		// function that exited non-zero (its stderr and exit code are
		// reported); kptbot names that function.
		var exit *FunctionExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("function %s failed: %w", r.name, err)
		}
		return res, &render.RenderError{Err: err, Results: res.Results}
	}
	output := pb.Nodes
	if selecting {
		output = render.MergeWithInput(output, selectedIDs, inputIDs, input)
		for _, n := range output {
			_ = n.PipeE(yaml.ClearAnnotation(render.ResourceIDAnnotation))
		}
	}
	res.Resources = output
	return res, nil
}

// filter is kpt's FunctionRunner around the function: input and output
// must be KRM, the output stays inside the package, and the function's
// structured results and stderr are recorded whether or not it failed.
func (r *evalRun) filter(input []*yaml.RNode, item *fnresults.Result) ([]*yaml.RNode, error) {
	if err := render.AreKRM(input); err != nil {
		return nil, fmt.Errorf("input resource list must contain only KRM resources: %s", err.Error())
	}
	ff := &runtimeutil.FunctionFilter{Run: r.run, FunctionConfig: r.config, GlobalScope: true}
	output, err := ff.Filter(input)
	if err == nil {
		if perr := render.EnforcePathInvariants(output); perr != nil {
			err = perr
		} else if kerr := render.AreKRM(output); kerr != nil {
			err = fmt.Errorf("output resource list must contain only KRM resources: %s", kerr.Error())
		}
	}
	if items, perr := fnrun.StructuredResults(ff.Results); perr != nil {
		return nil, perr
	} else {
		item.Results = items
	}
	item.Stderr = r.stderr()
	if err != nil {
		item.ExitCode = 1
		var ee *FunctionExitError
		if errors.As(err, &ee) {
			item.ExitCode = ee.ExitCode
		}
		return nil, err
	}
	return output, nil
}

// WriteEvalOutput writes an eval's resources as kpt's -o does: "stdout"
// wraps them in a ResourceList keeping kpt's path annotations, "unwrap"
// prints plain YAML without them, anything else is a directory that must
// not exist yet, written file by file from the path annotations.
func WriteEvalOutput(w io.Writer, dest string, nodes []*yaml.RNode) error {
	var buf bytes.Buffer
	err := kio.ByteWriter{Writer: &buf, KeepReaderAnnotations: true,
		WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}.Write(copyNodes(nodes))
	if err != nil {
		return err
	}
	if dest == "stdout" {
		_, err := w.Write(buf.Bytes())
		return err
	}
	var out kio.Writer
	if dest == "unwrap" {
		out = &kio.ByteWriter{Writer: w, ClearAnnotations: []string{kioutil.IndexAnnotation, kioutil.PathAnnotation,
			kioutil.LegacyIndexAnnotation, kioutil.LegacyPathAnnotation}} //nolint:staticcheck // kpt clears both
	} else {
		if err := os.MkdirAll(dest, 0o755); err != nil {
			return fmt.Errorf("failed to create output directory %q: %w", dest, err)
		}
		out = &kio.LocalPackageWriter{PackagePath: filepath.Clean(dest)}
	}
	return kio.Pipeline{
		Inputs:  []kio.Reader{&kio.ByteReader{Reader: &buf, PreserveSeqIndent: true, WrapBareSeqNode: true}},
		Outputs: []kio.Writer{out},
	}.Execute()
}

// evalConfig is the function config: the --fn-config file, or kpt's
// ConfigMap built from the function arguments.
func evalConfig(opts EvalOptions) (*yaml.RNode, error) {
	if len(opts.FnConfig) > 0 {
		if len(opts.Args) > 0 {
			return nil, fmt.Errorf("function arguments can only be specified without function config file")
		}
		// Read as kpt's GetValidatedFnConfigFromPath does: one KRM resource.
		r := kio.ByteReader{Reader: bytes.NewReader(opts.FnConfig), PreserveSeqIndent: true, WrapBareSeqNode: true, DisableUnwrapping: true}
		nodes, err := r.Read()
		if err != nil {
			return nil, fmt.Errorf("failed to read functionConfig %q: %w", opts.FnConfigName, err)
		}
		if len(nodes) == 0 {
			return nil, fmt.Errorf("functionConfig %q: expected a resource, the file has none", opts.FnConfigName)
		}
		if len(nodes) > 1 {
			return nil, fmt.Errorf("functionConfig %q must not contain more than one config, got %d", opts.FnConfigName, len(nodes))
		}
		if err := kptfilev1.IsKRM(nodes[0]); err != nil {
			return nil, fmt.Errorf("functionConfig %q: %w", opts.FnConfigName, err)
		}
		return nodes[0], nil
	}
	return argsConfig(opts.Args)
}

// argsConfig is kpt's command-line function config: a ConfigMap named
// function-input whose data holds the key=value arguments as strings; a
// first argument without "=" is the config's kind. No arguments, no data.
func argsConfig(args []string) (*yaml.RNode, error) {
	n := yaml.MustParse("metadata:\n  name: function-input\ndata: {}\n")
	kind := "ConfigMap"
	data := n.Field("data").Value
	for i, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if i == 0 && !ok {
			kind = a
			continue
		}
		if !ok {
			return nil, fmt.Errorf("function argument %q: args must have keys and values separated by =", a)
		}
		if err := data.PipeE(yaml.SetField(k, yaml.NewStringRNode(v))); err != nil {
			return nil, err
		}
	}
	if err := n.PipeE(yaml.SetField("kind", yaml.NewScalarRNode(kind))); err != nil {
		return nil, err
	}
	if err := n.PipeE(yaml.SetField("apiVersion", yaml.NewScalarRNode("v1"))); err != nil {
		return nil, err
	}
	return n, nil
}

// argsConfigMap is the configMap kpt's --save records for the function
// arguments (the kind argument is not part of it).
func argsConfigMap(args []string) map[string]string {
	data := map[string]string{}
	for i, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if i == 0 && !ok {
			continue
		}
		data[k] = v
	}
	if len(data) == 0 {
		return nil
	}
	return data
}
