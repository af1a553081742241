package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"github.com/spf13/cobra"

	"github.com/kptbot/kptbot/engine/fneval"
	"github.com/kptbot/kptbot/engine/fnresults"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/render"
)

// evalFlags are kpt's `fn eval` flags, plus kptbot's runtime flags.
type evalFlags struct {
	runtime                           runtimeFlags
	image, execPath, tag, fnType      string
	fnConfig, output, resultsDir      string
	pullPolicy                        string
	save, includeMeta, truncateOutput bool
	container                         fneval.ContainerOptions
	selector, exclusion               kptfilev1.Selector
	matchLabels, matchAnnotations     []string
	excludeLabels, excludeAnnotations []string
}

func (f *evalFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.runtime.add(cmd)
	fl.StringVarP(&f.image, "image", "i", "", "run this image as a function (built-in, or with docker/podman)")
	fl.StringVar(&f.tag, "tag", "", "semantic version constraint for the image tag or exact tag replacement")
	fl.StringVar(&f.execPath, "exec", "", "run an executable as a function, with its arguments (needs --allow-exec)")
	fl.StringVar(&f.fnConfig, "fn-config", "", "path to the function config file")
	fl.StringVarP(&f.output, "output", "o", "", "write the output to stdout (a ResourceList), unwrap (plain YAML) or a new directory, instead of in place")
	fl.StringVar(&f.resultsDir, "results-dir", "", "write function results to this dir")
	fl.BoolVarP(&f.save, "save", "s", false, "save the function and its arguments to the Kptfile")
	fl.StringVarP(&f.fnType, "type", "t", "", "mutator or validator: the Kptfile list --save adds the function to")
	fl.BoolVarP(&f.includeMeta, "include-meta-resources", "m", false, "include package meta resources in function input (no longer necessary)")
	_ = fl.MarkHidden("include-meta-resources")
	fl.BoolVar(&f.truncateOutput, "truncate-output", true, "shorten a failed function's stderr to its first 4 lines")
	fl.BoolVar(&f.container.Network, "network", false, "enable network access for the function (runs it in a container)")
	fl.StringArrayVar(&f.container.Mounts, "mount", nil, "a docker --mount storage option for the function (runs it in a container)")
	fl.StringArrayVarP(&f.container.Env, "env", "e", nil, "KEY=VALUE or KEY: environment variables for the function (runs it in a container)")
	fl.BoolVar(&f.container.AsCurrentUser, "as-current-user", false, "run the function's container with kptbot's uid and gid")
	fl.StringVar(&f.pullPolicy, "image-pull-policy", "", "pull the image before running the container: Always, IfNotPresent or Never (runs it in a container)")
	for _, s := range []struct {
		prefix, verb string
		sel          *kptfilev1.Selector
		labels, anns *[]string
	}{{"match", "select", &f.selector, &f.matchLabels, &f.matchAnnotations}, {"exclude", "exclude", &f.exclusion, &f.excludeLabels, &f.excludeAnnotations}} {
		fl.StringVar(&s.sel.APIVersion, s.prefix+"-api-version", "", s.verb+" resources matching the given apiVersion")
		fl.StringVar(&s.sel.Kind, s.prefix+"-kind", "", s.verb+" resources matching the given kind")
		fl.StringVar(&s.sel.Name, s.prefix+"-name", "", s.verb+" resources matching the given name")
		fl.StringVar(&s.sel.Namespace, s.prefix+"-namespace", "", s.verb+" resources matching the given namespace")
		fl.StringArrayVar(s.anns, s.prefix+"-annotations", nil, s.verb+" resources matching the given annotations (key=value)")
		fl.StringArrayVar(s.labels, s.prefix+"-labels", nil, s.verb+" resources matching the given labels (key=value)")
	}
}

// options checks the flags as kpt's eval does, in kpt's order, and builds
// the engine's options.
func (f *evalFlags) options(args []string) (fneval.EvalOptions, error) {
	opts := fneval.EvalOptions{Runtimes: f.runtime.runtimes(), Image: f.image, Exec: f.execPath, Tag: f.tag,
		ImagePrefix: f.runtime.imagePrefix, Args: args, Container: f.container}
	if f.includeMeta {
		return opts, errors.New("--include-meta-resources is no longer necessary because meta resources are now included by default")
	}
	if f.save {
		if f.fnType == "" {
			return opts, errors.New("--type must be specified if saving functions to Kptfile (--save=true)")
		}
		if f.fnType != "mutator" && f.fnType != "validator" {
			return opts, errors.New("--type must be either `mutator` or `validator`")
		}
	}
	if f.output != "" && f.output != "stdout" && f.output != "unwrap" {
		if _, err := os.Stat(f.output); err == nil {
			return opts, fmt.Errorf("directory %q already exists, please delete the directory and retry", f.output)
		}
	}
	if f.image == "" && f.execPath == "" {
		return opts, errors.New("must specify --image or --exec")
	}
	if f.pullPolicy != "" {
		p, err := fneval.ParsePullPolicy(f.pullPolicy)
		if err != nil {
			return opts, err
		}
		opts.Container.PullPolicy = p
	}
	var err error
	sel, excl := f.selector, f.exclusion
	if sel.Labels, err = selectorMap("--match-labels", f.matchLabels); err != nil {
		return opts, err
	}
	if sel.Annotations, err = selectorMap("--match-annotations", f.matchAnnotations); err != nil {
		return opts, err
	}
	if excl.Labels, err = selectorMap("--exclude-labels", f.excludeLabels); err != nil {
		return opts, err
	}
	if excl.Annotations, err = selectorMap("--exclude-annotations", f.excludeAnnotations); err != nil {
		return opts, err
	}
	opts.Selector, opts.Exclusion = sel, excl
	if f.fnConfig != "" {
		b, err := os.ReadFile(f.fnConfig)
		if errors.Is(err, os.ErrNotExist) {
			return opts, fmt.Errorf("missing function config file: %s", f.fnConfig)
		} else if err != nil {
			return opts, fmt.Errorf("reading --fn-config: %w", err)
		}
		opts.FnConfig, opts.FnConfigName = b, f.fnConfig
	}
	return opts, nil
}

// selectorMap reads key=value selector flags.
func selectorMap(flag string, items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, s := range items {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: expected key=value", flag, s)
		}
		m[k] = v
	}
	return m, nil
}

func newFnEvalCmd() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval [DIR | -] (--image IMG | --exec PATH) [flags] [-- key=value ...]",
		Short: "Run one function over a package (like kpt fn eval)",
		Long: `Run one function over the resources of a package (subpackages included), as
kpt fn eval: in place, or to -o stdout|unwrap|DIR. "-" reads the resources (a
YAML stream or a ResourceList) from standard input and writes a ResourceList
to standard output, so evals chain with pipes. key=value arguments after --
become a ConfigMap function config (a first argument without "=" is its kind).
--match-* and --exclude-* restrict the resources the function sees.
--save records the function in the Kptfile pipeline (--type mutator|validator).
Built-in images run in-process; --network, --mount, --env, --as-current-user
and --image-pull-policy need a container engine (docker, podman, or
KPT_FN_RUNTIME) and run the image there.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			var kv []string
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				kv, args = args[dash:], args[:dash]
			}
			if len(args) > 1 {
				return errors.New("0 or 1 arguments supported, function arguments go after '--'")
			}
			if len(args) == 1 {
				dir = args[0]
			}
			if dir != "-" {
				resolved, err := fneval.ResolveSymlink(cmd.ErrOrStderr(), dir)
				if err != nil {
					return err
				}
				dir = resolved
			}
			opts, err := f.options(kv)
			if err != nil {
				return err
			}
			return f.run(cmd, dir, opts)
		},
	}
	f.add(cmd)
	return cmd
}

func (f *evalFlags) run(cmd *cobra.Command, dir string, opts fneval.EvalOptions) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	fromStdin := dir == "-"
	var saved kptfilev1.Function
	if f.save && !fromStdin {
		var err error
		if saved, err = fneval.SavedFunction(dir, opts, f.fnConfig); err != nil {
			return err
		}
	}
	if f.resultsDir != "" {
		if err := os.MkdirAll(f.resultsDir, 0o755); err != nil {
			return fmt.Errorf("cannot read or create results dir %q: %w", f.resultsDir, err)
		}
	}
	start := time.Now()
	var res *fneval.EvalResult
	var err error
	switch {
	case fromStdin:
		res, err = fneval.EvalReader(cmd.Context(), cmd.InOrStdin(), opts)
	case f.output != "":
		var have kptpkg.Tree
		if have, err = kptpkg.ReadTree(dir); err == nil {
			res, err = fneval.EvalTree(cmd.Context(), have, opts)
		}
	default:
		res, err = fneval.Eval(cmd.Context(), dir, opts)
	}
	if res != nil {
		f.report(stderr, res, err, time.Since(start))
		if f.resultsDir != "" {
			if p, werr := render.WriteResults(f.resultsDir, res.Results); werr == nil {
				fmt.Fprintf(stderr, "For complete results, see %s\n", p)
			} else if err == nil {
				err = werr
			}
		}
	}
	if err != nil {
		return err
	}
	switch {
	case f.output != "":
		if err := fneval.WriteEvalOutput(stdout, f.output, res.Resources); err != nil {
			return err
		}
	case fromStdin:
		if err := fneval.WriteEvalOutput(stdout, "stdout", res.Resources); err != nil {
			return err
		}
	}
	if f.save {
		if fromStdin {
			fmt.Fprintln(stderr, fneval.ErrNoKptfile.Error())
			return nil
		}
		msg, err := fneval.SaveFunction(dir, f.fnType, saved)
		if errors.Is(err, fneval.ErrNoKptfile) {
			fmt.Fprintln(stderr, err.Error())
			return nil
		} else if err != nil {
			return err
		}
		fmt.Fprintln(stderr, msg)
	}
	return nil
}

// report prints kpt's lines for the function run: [RUNNING], [PASS] or
// [FAIL] with the time taken, the structured results, and stderr.
func (f *evalFlags) report(w io.Writer, res *fneval.EvalResult, err error, took time.Duration) {
	if res.Selected >= 0 {
		fmt.Fprintf(w, "[RUNNING] %q on %d resource(s)\n", res.Function, res.Selected)
	} else {
		fmt.Fprintf(w, "[RUNNING] %q\n", res.Function)
	}
	status := "PASS"
	if err != nil {
		status = "FAIL"
	}
	fmt.Fprintf(w, "[%s] %q in %v\n", status, res.Function, took.Truncate(100*time.Millisecond))
	var item fnresults.Result
	if res.Results != nil && len(res.Results.Items) > 0 {
		item = res.Results.Items[0]
	}
	if len(item.Results) > 0 {
		lines := make([]string, len(item.Results))
		for i, r := range item.Results {
			lines[i] = r.String()
		}
		fmt.Fprintf(w, "[Results]: %s\n", strings.Join(lines, ", "))
	}
	if s := strings.TrimRight(item.Stderr, "\n"); s != "" {
		lines := strings.Split(s, "\n")
		if err != nil && f.truncateOutput && len(lines) > 4 {
			lines = append(lines[:4], fmt.Sprintf("...(%d line(s) truncated, use '--truncate-output=false' to disable)", len(lines)-4))
		}
		if strings.HasSuffix(item.Stderr, "\n") {
			// kpt splits the stderr as it is: a final newline (an exec
			// function's; a container's is dropped) leaves an empty item
			lines = append(lines, "")
		}
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		// kpt's line: " Stderr: " and the lines joined; a failed
		// function's exit code follows on the same line. kpt ends a
		// passing function's line without a newline, gluing the next
		// output to it; kptbot ends it.
		fmt.Fprintf(w, " Stderr: %s", strings.Join(lines, ", "))
		var exit *fneval.FunctionExitError
		if !errors.As(err, &exit) {
			fmt.Fprintln(w)
		}
	}
	var exit *fneval.FunctionExitError
	if errors.As(err, &exit) {
		fmt.Fprintf(w, "  Exit code: %d\n", exit.ExitCode)
	}
}
