package render

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins"
	"github.com/kptbot/kptbot/engine/fnresults"
	"github.com/kptbot/kptbot/engine/fnrun"
	"github.com/kptbot/kptbot/engine/kptpkg"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// prepared is a pipeline function ready to run: a built-in, or a process.
type prepared struct {
	f       kptfilev1.Function
	image   string // resolved; empty for exec
	builtin *builtins.Function
	proc    *fnrun.Process
}

// errExecNotAllowed is kpt's refusal of an exec function without --allow-exec.
var errExecNotAllowed = errors.New("must run with `--allow-exec` option to allow running function binaries")

// prepare is kpt's NewRunner for f: exec needs AllowExec and a valid
// command; an image runs as a built-in when kptbot has it, else in a
// container engine if containers are allowed and one is installed.
func (h *hydrator) prepare(ctx context.Context, dir string, f kptfilev1.Function) (*prepared, error) {
	if f.Exec != "" {
		if !h.opts.AllowExec {
			return nil, errExecNotAllowed
		}
		if _, err := h.configFile(dir, f); err != nil {
			return nil, err
		}
		proc, err := fnrun.Exec(f.Exec)
		if err != nil {
			return nil, err
		}
		return &prepared{f: f, proc: proc}, nil
	}
	if f.Image == "" {
		return nil, fmt.Errorf("must specify `exec` or `image` to execute a function")
	}
	if _, err := h.configFile(dir, f); err != nil {
		return nil, err
	}
	image := h.resolve(f.Image)
	if b, ok := h.fns[image]; ok {
		return &prepared{f: f, image: image, builtin: b}, nil
	}
	if b, ok := builtins.Lookup(image); ok {
		h.fns[image] = b
		return &prepared{f: f, image: image, builtin: b}, nil
	}
	engine := fnrun.FindEngine(h.opts.ContainerEngine)
	if !h.opts.AllowContainers || engine == "" {
		return nil, fmt.Errorf("function runtime failed to evaluate function %q: %w", image, CannotRun(image, h.opts.AllowContainers, engine))
	}
	if !h.engineChecked {
		if err := fnrun.CheckEngine(ctx, engine); err != nil {
			return nil, err
		}
		h.engineChecked = true
	}
	return &prepared{f: f, image: image, proc: fnrun.Container(engine, image, fnrun.ContainerOptions{})}, nil
}

// configFile is kpt's newFnConfig: the function's configPath file parsed
// (its existence and form were validated with the Kptfile).
func (h *hydrator) configFile(dir string, f kptfilev1.Function) (*yaml.RNode, error) {
	if f.ConfigPath == "" {
		return nil, nil
	}
	op := "fn.readConfig: "
	if f.Image != "" {
		op += "fn " + f.Image + ": "
	}
	b, err := h.readFile(dir, f.ConfigPath)
	if err != nil {
		return nil, fmt.Errorf("%smissing function config %q", op, f.ConfigPath)
	}
	n, err := yaml.Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("%sinvalid function config %q %w", op, f.ConfigPath, err)
	}
	return n, nil
}

// run executes one function of the package at dir, as kpt's FunctionRunner.
func (h *hydrator) run(ctx context.Context, dir string, p *prepared, input []*yaml.RNode, mutator bool) ([]*yaml.RNode, error) {
	if p.proc != nil {
		return h.runProcess(ctx, dir, p, input, mutator)
	}
	f, b, image := p.f, p.builtin, p.image
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
		res := fnresults.Result{Image: image, Results: fnresults.FromSDK(results)}
		res.Stderr = builtins.ContainerStderr(stderr.String(), runErr != nil)
		if runErr != nil {
			res.ExitCode = 1
			h.results.ExitCode = 1
		}
		h.results.Items = append(h.results.Items, res)
		return output, runErr
	})
}

// runProcess runs an exec or container function: kpt hands it the
// pipeline's own resource at configPath (annotations and all) for a
// mutator, the file as read for a validator, and records its results,
// stderr and exit code.
func (h *hydrator) runProcess(ctx context.Context, dir string, p *prepared, input []*yaml.RNode, mutator bool) ([]*yaml.RNode, error) {
	config, err := h.configFile(dir, p.f)
	if err != nil {
		return nil, err
	}
	if p.f.ConfigPath == "" {
		if config, err = h.config(dir, p.f, nil); err != nil {
			return nil, err
		}
	} else if mutator {
		for _, r := range input {
			rp, _, _ := kioutil.GetFileAnnotations(r)
			if kptpkg.Annotation(r, PkgPathAnnotation) == h.abs(dir) && rp == p.f.ConfigPath {
				config = r
			}
		}
	}
	return h.step(dir, p.f, input, mutator, func(selected []*yaml.RNode) ([]*yaml.RNode, error) {
		if err := AreKRM(selected); err != nil {
			return nil, fmt.Errorf("input resource list must contain only KRM resources: %s", err.Error())
		}
		output, outcome, err := p.proc.Filter(ctx, config, selected, func(out []*yaml.RNode) error {
			for _, n := range out {
				if kptpkg.Annotation(n, PkgPathAnnotation) == "" {
					if err := n.PipeE(yaml.SetAnnotation(PkgPathAnnotation, h.abs(dir))); err != nil {
						return err
					}
				}
			}
			if err := EnforcePathInvariants(out); err != nil {
				return err
			}
			if err := AreKRM(out); err != nil {
				return fmt.Errorf("output resource list must contain only KRM resources: %s", err.Error())
			}
			return nil
		})
		if outcome != nil {
			if outcome.ExitCode != 0 {
				h.results.ExitCode = 1
			}
			h.results.Items = append(h.results.Items, fnresults.Result{Image: p.image, ExecPath: p.f.Exec,
				Stderr: outcome.Stderr, ExitCode: outcome.ExitCode, Results: outcome.Results})
		}
		var exit *fnrun.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("function %s failed: %w%s", p.proc.Name, err, stderrTail(exit.Stderr))
		}
		return output, err
	})
}

// stderrTail is a failed function's stderr for its error message: the
// last lines, which say why.
func stderrTail(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return ":\n\t" + strings.Join(lines, "\n\t")
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
