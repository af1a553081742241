package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"github.com/kptdev/kpt/pkg/fn"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/exec"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// EvalOptions configures Eval.
type EvalOptions struct {
	Runtimes
	// Image or Exec names the function (exactly one).
	Image, Exec string
	// FnConfig is the function config file's content (optional).
	FnConfig []byte
	// FnConfigName names FnConfig in errors.
	FnConfigName string
	// Args become the data of a ConfigMap function config (key=value),
	// used when FnConfig is empty.
	Args map[string]string
	// ImagePrefix qualifies images without a registry.
	ImagePrefix string
}

// Eval runs one function over every resource of the package at dir
// (subpackages included), as `kpt fn eval`, and writes the result back
// only if the function succeeds.
func Eval(ctx context.Context, dir string, opts EvalOptions) (*RenderResult, error) {
	if (opts.Image == "") == (opts.Exec == "") {
		return nil, fmt.Errorf("exactly one of --image and --exec must be given")
	}
	if opts.Exec != "" && !opts.AllowExec {
		return nil, fmt.Errorf("exec function %q: running binaries needs --allow-exec", opts.Exec)
	}
	have, err := ReadTree(dir)
	if err != nil {
		return nil, err
	}
	if err := checkKRM(have); err != nil {
		return nil, err
	}
	cfg, err := evalConfig(opts)
	if err != nil {
		return nil, err
	}
	image := opts.Image
	if image != "" && !strings.Contains(image, "/") {
		prefix := opts.ImagePrefix
		if prefix == "" {
			prefix = DefaultImagePrefix
		}
		image = strings.TrimSuffix(prefix, "/") + "/" + image
	}
	var runner fn.FunctionRunner = &exec.Filter{Path: opts.Exec}
	if image != "" {
		if runner, err = (runtime{rt: opts.Runtimes}).GetRunner(ctx, &kptfilev1.Function{Image: image}); err != nil {
			return nil, err
		}
	}

	const root = "/pkg"
	fsys, err := have.memFS(root)
	if err != nil {
		return nil, err
	}
	rw := &kio.LocalPackageReadWriter{
		PackagePath:        root,
		PreserveSeqIndent:  true,
		WrapBareSeqNode:    true,
		IncludeSubpackages: true,
		PackageFileName:    KptfileName,
		MatchFilesGlob:     append([]string{KptfileName}, kio.DefaultMatch...),
		FileSystem:         filesys.FileSystemOrOnDisk{FileSystem: fsys},
	}
	filter := &runtimeutil.FunctionFilter{Run: runner.Run, FunctionConfig: cfg, GlobalScope: true}
	err = kio.Pipeline{Inputs: []kio.Reader{rw}, Filters: []kio.Filter{filter}, Outputs: []kio.Writer{rw}}.Execute()
	name := image + opts.Exec
	if err != nil {
		return nil, fmt.Errorf("function %s failed: %w", name, err)
	}
	out, err := readFS(fsys, root)
	if err != nil {
		return nil, err
	}
	preserveUntouched(have, out)
	res := &RenderResult{Tree: out}
	res.Added, res.Removed, res.Modified = have.Changes(out)
	if err := syncDir(dir, have, out); err != nil {
		return res, err
	}
	return res, nil
}

func evalConfig(opts EvalOptions) (*yaml.RNode, error) {
	if len(opts.FnConfig) > 0 {
		n, err := yaml.Parse(string(opts.FnConfig))
		if err != nil {
			return nil, fmt.Errorf("function config %s: not valid YAML: %w", opts.FnConfigName, err)
		}
		if n.GetKind() == "" {
			return nil, fmt.Errorf("function config %s: kind is required", opts.FnConfigName)
		}
		return n, nil
	}
	if len(opts.Args) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(opts.Args))
	for k := range opts.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	n := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata: {}\n")
	data := map[string]string{}
	for _, k := range keys {
		data[k] = opts.Args[k]
	}
	n.SetDataMap(data)
	return n, nil
}
