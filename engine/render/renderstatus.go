package render

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/kptbot/kptbot/engine/fnresults"
	"github.com/kptbot/kptbot/engine/kptpkg"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// plannedStep is a pipeline function in the order a render runs it.
type plannedStep struct {
	pkg     string
	index   int // within the package's mutators or validators
	mutator bool
	fn      kptfilev1.Function
}

// renderPlan lists the steps of a render in kpt's order: packages depth
// first, subpackages (sorted) before their parent, or, with the root's
// kpt.dev/bfs-rendering annotation, the root first and then level by
// level; each package's mutators, then its validators.
func renderPlan(in kptpkg.Tree, kfs *kptpkg.Kptfiles) []plannedStep {
	pkgs := map[string]*kptfilev1.KptFile{}
	for _, p := range in.Paths() {
		if path.Base(p) != kptpkg.KptfileName || underVCSDir(p) {
			continue
		}
		kf, err := kfs.Decode(p, in[p])
		if err != nil {
			continue
		}
		pkgs[path.Dir(p)] = kf
	}
	root := pkgs["."]
	if root == nil {
		return nil
	}
	var order []string
	if root.Annotations[kptfilev1.BFSRenderAnnotation] == "true" {
		queue := []string{"."}
		for len(queue) > 0 {
			dir := queue[0]
			queue = queue[1:]
			order = append(order, dir)
			queue = append(queue, subpackagesOf(dir, pkgs)...)
		}
	} else {
		var walk func(dir string)
		walk = func(dir string) {
			for _, sub := range subpackagesOf(dir, pkgs) {
				walk(sub)
			}
			order = append(order, dir)
		}
		walk(".")
	}
	var plan []plannedStep
	for _, dir := range order {
		pl := pkgs[dir].Pipeline
		if pl == nil {
			continue
		}
		for i, f := range pl.Mutators {
			plan = append(plan, plannedStep{pkg: dir, index: i, mutator: true, fn: f})
		}
		for i, f := range pl.Validators {
			plan = append(plan, plannedStep{pkg: dir, index: i, fn: f})
		}
	}
	return plan
}

// buildRenderStatus is kpt's render status for a render of in that
// produced results and ended with rerr (nil on success): each function
// run is a step with its exit code and results; a function that could
// not start (not allowed, no runtime for it) or was refused its input is
// a step with exit code 1 and the execution error; nil when no step ran.
func buildRenderStatus(ctx context.Context, in kptpkg.Tree, opts RenderOptions, results *fnresults.List, rerr error) *kptpkg.RenderStatus {
	plan := renderPlan(in, opts.kptfiles)
	var items []fnresults.Result
	if results != nil {
		items = results.Items
	}
	rs := &kptpkg.RenderStatus{}
	add := func(s plannedStep, r kptpkg.PipelineStepResult) {
		if s.mutator {
			rs.MutationSteps = append(rs.MutationSteps, r)
		} else {
			rs.ValidationSteps = append(rs.ValidationSteps, r)
		}
	}
	k := 0
	for ; k < len(items) && k < len(plan); k++ {
		add(plan[k], stepResult(plan[k].fn, items[k]))
	}
	rs.FunctionFailed = rerr != nil && k > 0 && items[k-1].ExitCode != 0
	if rerr != nil && k < len(plan) && (k == 0 || items[k-1].ExitCode == 0) {
		if s, r, ok := unstartedStep(ctx, plan, k, opts, rerr); ok {
			add(s, r)
		}
	}
	if len(rs.MutationSteps) == 0 && len(rs.ValidationSteps) == 0 {
		return nil
	}
	if rerr != nil {
		var lines []string
		for _, s := range append(append([]kptpkg.PipelineStepResult{}, rs.MutationSteps...), rs.ValidationSteps...) {
			switch {
			case s.ExecutionError != "":
				lines = append(lines, fmt.Sprintf("%s: %s", s.StepName(), s.ExecutionError))
			case s.ExitCode != 0:
				lines = append(lines, fmt.Sprintf("%s: exit code %d", s.StepName(), s.ExitCode))
			}
		}
		rs.ErrorSummary = strings.Join(lines, "\n")
	}
	return rs
}

// stepResult is kpt's record of a function that ran.
func stepResult(f kptfilev1.Function, r fnresults.Result) kptpkg.PipelineStepResult {
	step := kptpkg.PipelineStepResult{Name: f.Name, Image: withDefaultTag(r.Image), ExecPath: r.ExecPath, Stderr: r.Stderr, ExitCode: r.ExitCode}
	for _, ri := range r.Results {
		if ri == nil {
			continue
		}
		item := kptpkg.ResultItem{Message: ri.Message, Severity: string(ri.Severity), ResourceRef: ri.ResourceRef, Tags: ri.Tags}
		if ri.File != nil {
			item.File = &kptpkg.ResultFile{Path: ri.File.Path, Index: ri.File.Index}
		}
		if ri.Field != nil {
			item.Field = &kptpkg.ResultField{Path: ri.Field.Path, CurrentValue: scalarString(ri.Field.CurrentValue), ProposedValue: scalarString(ri.Field.ProposedValue)}
		}
		step.Results = append(step.Results, item)
		if ri.Severity == fnresults.Error {
			step.ErrorResults = append(step.ErrorResults, item)
		}
	}
	return step
}

func scalarString(v interface{}) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// unstartedStep finds the step a failed render stopped at without a
// result: kpt prepares all of a package's mutators before running the
// first, so the first one that cannot start fails; a function refused
// its input fails when it runs. Errors outside any step (reading a
// package, merging a selection back) record no step.
func unstartedStep(ctx context.Context, plan []plannedStep, k int, opts RenderOptions, rerr error) (plannedStep, kptpkg.PipelineStepResult, bool) {
	msg := rerr.Error()
	i := strings.LastIndex(msg, "pipeline.run: ")
	if i < 0 {
		return plannedStep{}, kptpkg.PipelineStepResult{}, false
	}
	msg = strings.TrimSpace(msg[i+len("pipeline.run: "):])
	at := k
	cannotStart := false
	for j := k; j < len(plan) && plan[j].pkg == plan[k].pkg && plan[j].mutator == plan[k].mutator; j++ {
		if !startable(ctx, plan[j].fn, opts) {
			at, cannotStart = j, true
			break
		}
		if !plan[k].mutator {
			break // validators are prepared one at a time
		}
	}
	// kpt's runner checks the input, and a failed function's output, before
	// it records the function's result
	if !cannotStart && !strings.HasPrefix(msg, "input resource list must contain only KRM resources") && !strings.HasPrefix(msg, "resource at path ") {
		return plannedStep{}, kptpkg.PipelineStepResult{}, false
	}
	f := plan[at].fn
	return plan[at], kptpkg.PipelineStepResult{Name: f.Name, Image: resolvedImage(f.Image, opts.ImagePrefix), ExecPath: f.Exec, ExitCode: 1, ExecutionError: msg}, true
}

// startable reports whether kpt's runner could be made for f: exec needs
// AllowExec, an image needs a runtime.
func startable(ctx context.Context, f kptfilev1.Function, opts RenderOptions) bool {
	if f.Exec != "" {
		return opts.AllowExec
	}
	img := resolvedImage(f.Image, opts.ImagePrefix)
	_, err := Runtime{Runtimes: opts.Runtimes}.GetRunner(ctx, &kptfilev1.Function{Image: img})
	return err == nil
}

// resolvedImage is the image as kpt's runner names it: the catalog prefix
// for a bare name.
func resolvedImage(image, prefix string) string {
	if image == "" || strings.Contains(image, "/") {
		return withDefaultTag(image)
	}
	if prefix == "" {
		prefix = DefaultImagePrefix
	}
	return withDefaultTag(strings.TrimSuffix(prefix, "/") + "/" + image)
}

// withDefaultTag is kpt's (v1.0.0-beta.63 and later) ":latest" for an
// image without tag or digest.
func withDefaultTag(image string) string {
	if image == "" || strings.Contains(image, "@") || strings.Contains(image[strings.LastIndex(image, "/")+1:], ":") {
		return image
	}
	return image + ":latest"
}

// kptfileWithStatus is the Kptfile as kpt v1.0.0-beta.67 writes it after a
// render: the whole file re-encoded from its fields, in their order.
type kptfileWithStatus struct {
	yaml.ResourceMeta `yaml:",inline" json:",inline"`
	Upstream          *kptfilev1.Upstream     `yaml:"upstream,omitempty" json:"upstream,omitempty"`
	UpstreamLock      *kptfilev1.UpstreamLock `yaml:"upstreamLock,omitempty" json:"upstreamLock,omitempty"`
	Info              *kptfilev1.PackageInfo  `yaml:"info,omitempty" json:"info,omitempty"`
	Pipeline          *kptfilev1.Pipeline     `yaml:"pipeline,omitempty" json:"pipeline,omitempty"`
	Inventory         *kptfilev1.Inventory    `yaml:"inventory,omitempty" json:"inventory,omitempty"`
	Status            *kptfileStatus          `yaml:"status,omitempty" json:"status,omitempty"`
}

type kptfileStatus struct {
	Conditions   []kptfilev1.Condition `yaml:"conditions,omitempty" json:"conditions,omitempty"`
	RenderStatus *kptpkg.RenderStatus  `yaml:"renderStatus,omitempty" json:"renderStatus,omitempty"`
}

// withRenderStatus is kpt's setRenderStatus: the Rendered condition
// replaces any earlier one (other conditions stay, in order), the render
// status replaces any earlier one (none when no step ran), and the Kptfile
// is written out whole in kpt's field order and layout, as kpt does.
func withRenderStatus(kfs *kptpkg.Kptfiles, kptfile []byte, c kptfilev1.Condition, rs *kptpkg.RenderStatus) ([]byte, error) {
	kf, err := kfs.Decode(kptpkg.KptfileName, kptfile)
	if err != nil {
		return nil, err
	}
	out := kptfileWithStatus{ResourceMeta: kf.ResourceMeta, Upstream: kf.Upstream, UpstreamLock: kf.UpstreamLock,
		Info: kf.Info, Pipeline: kf.Pipeline, Inventory: kf.Inventory, Status: &kptfileStatus{}}
	if kf.Status != nil {
		for _, old := range kf.Status.Conditions {
			if old.Type != ConditionRendered {
				out.Status.Conditions = append(out.Status.Conditions, old)
			}
		}
	}
	out.Status.Conditions = append(out.Status.Conditions, c)
	out.Status.RenderStatus = rs
	b, err := marshalKptfile(out)
	if err != nil {
		return nil, fmt.Errorf("writing the render status: %w", err)
	}
	return b, nil
}

// renderedMessage is the Rendered condition's message kpt writes: the
// hydration error without the fn.render wrapper, as if rendered from the
// package's directory, the package's directory dir written ".".
func renderedMessage(err error, dir string, rs *kptpkg.RenderStatus) string {
	msg := err.Error()
	if dir != "" && dir != "." {
		msg = strings.ReplaceAll(msg, filepath.Clean(dir), ".")
	}
	if i := strings.LastIndex(msg, "pipeline.run: "); i >= 0 && rs != nil && rs.FunctionFailed {
		// kpt prints a failed function's results and stderr, and its
		// error says only that
		msg = msg[:i] + "pipeline.run: already handled error"
	}
	const outer = "fn.render: pkg .:\n\t"
	if rest, ok := strings.CutPrefix(msg, outer); ok {
		if inner, ok := strings.CutPrefix(rest, "pkg.render:\n\t"); ok {
			// kpt names the innermost package that failed
			if sub, ok := strings.CutPrefix(inner, "pkg ./"); ok {
				if name, tail, ok := strings.Cut(sub, ": "); ok {
					return "pkg.render: pkg ./" + name + ":\n\t" + tail
				}
			}
			return "pkg.render: pkg .:\n\t" + inner
		}
		return rest
	}
	return msg
}

// recordsStatus reports whether kpt records a failed render in the root
// Kptfile: not when the root package itself cannot be read (its Kptfile,
// its pipeline's configuration), which fails before the render starts.
func recordsStatus(err error) bool {
	return !strings.HasPrefix(err.Error(), "fn.render: pkg .:\n\tpkg.read:")
}
