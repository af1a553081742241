// Package builtins runs common catalog KRM functions in-process, so that a
// `kpt fn render` pipeline made of them needs no container runtime.
//
// Each built-in speaks the KRM wire protocol (a ResourceList in, a
// ResourceList out), so a caller can use it wherever kpt expects a
// fn.FunctionRunner and fall back to a container for anything Lookup does
// not know.
package builtins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Function is one built-in KRM function. Values come from Lookup or All; the
// zero value cannot run.
type Function struct {
	// Name is the catalog name, e.g. "set-labels", as it appears in image references.
	Name string
	// Versions are the catalog tag lines this implementation is faithful to,
	// e.g. []string{"v0.1", "v0.2"}. A tag vX.Y or vX.Y.Z matches if its vX.Y is listed.
	Versions []string
	// Description is one line for listings such as `kptbot fn list`.
	Description string

	run processor
	// skip, if set, lets Run leave items the function cannot change
	// unparsed; only for functions that edit items in place and never add,
	// drop or reorder them.
	skip resourcelist.SkipFunc
	// stream, if set, prepares the function to run piece by piece (see
	// Stream); only for functions that change each resource on its own.
	stream streamer
	// sourced, if set, is stream for a function that reads values across
	// resources it can be handed up front (see Sources).
	sourced sourcer
	// readsAll: the function may read or write any field of a resource,
	// bookkeeping annotations included (see ReadsAnyField).
	readsAll bool
	// ctx bounds each run (see WithContext).
	ctx context.Context
	// maxSteps bounds a starlark script (see WithStepLimit).
	maxSteps uint64
	// stderr receives the function's standard error (see WithStderr).
	stderr io.Writer
	// sdkOrder: the catalog function is built with the KRM function SDK,
	// which writes its items sorted (sortLikeSDK). Run sorts as the SDK
	// does; Process keeps the order it was given, for a renderer that
	// writes files by their annotations and may stream.
	sdkOrder bool
}

// WithStderr returns a copy of f that writes what the catalog function
// would write to its standard error (a starlark script's print) to w,
// which kpt shows after the function's results and records as the
// step's stderr. Without it that output is dropped.
func (f *Function) WithStderr(w io.Writer) *Function {
	c := *f
	c.stderr = w
	return &c
}

// WithStepLimit returns a copy of f whose starlark scripts may run at most
// n steps; 0 means the default, starlarkfn.BaseSteps plus
// starlarkfn.StepsPerResource per resource.
func (f *Function) WithStepLimit(n uint64) *Function {
	c := *f
	c.maxSteps = n
	return &c
}

// WithContext returns a copy of f whose runs stop when ctx is done: a
// function that may not end by itself (a starlark script) is cancelled
// then and fails naming the reason.
func (f *Function) WithContext(ctx context.Context) *Function {
	c := *f
	c.ctx = ctx
	return &c
}

// ReadsAnyField reports whether f may read or write any field of a
// resource, the annotations a renderer keeps its bookkeeping in included
// (search-replace, apply-replacements, starlark), rather than only the
// fields its configuration names.
func (f *Function) ReadsAnyField() bool { return f != nil && f.readsAll }

// SortsOutput reports whether f, like the catalog image built on the KRM
// function SDK, returns its items in the SDK's order (apiVersion, kind,
// namespace, name) rather than in the order it was given them.
func (f *Function) SortsOutput() bool { return f != nil && f.sdkOrder }

// errFunctionFailure is a function body's failure that it reported through
// its results, none of them an error (the catalog's SDK exits 1 then).
var errFunctionFailure = errors.New("function failure")

// processor is the body of a built-in. It edits rl in place and returns an
// error when the function as a whole fails; it may also report failure
// through error-severity results.
type processor func(rl *resourcelist.List) error

// functions builds the table of built-ins. It is a function rather than a
// package variable so that callers can never mutate shared state.
func functions() []Function {
	return []Function{
		{Name: "apply-replacements", Versions: []string{"v0.1"}, Description: "Copy field values between resources with kustomize-style replacements.", run: runApplyReplacements, sourced: sourceApplyReplacements, readsAll: true, sdkOrder: true},
		{Name: "apply-setters", Versions: []string{"v0.1", "v0.2"}, Description: "Set values of fields marked with kpt-set setter comments.", run: streamed(streamApplySetters), stream: streamApplySetters, skip: skipWithoutSetters},
		{Name: "ensure-name-substring", Versions: []string{"v0.1", "v0.2"}, Description: "Prepend or append a substring to resource names and the references to them.", run: runEnsureNameSubstring},
		{Name: "search-replace", Versions: []string{"v0.1", "v0.2"}, Description: "Search fields by path, value or file and optionally replace values or add comments.", run: streamed(streamSearchReplace), stream: streamSearchReplace, readsAll: true},
		{Name: "set-annotations", Versions: []string{"v0.1"}, Description: "Add or update annotations on all resources and their pod templates.", run: streamed(streamSetAnnotations), stream: streamSetAnnotations},
		{Name: "set-image", Versions: []string{"v0.1"}, Description: "Update container image names, tags and digests.", run: runSetImage, stream: streamSetImage, sdkOrder: true},
		// set-labels v0.2 rewrote v0.1's kustomize field specs; the
		// current line comes first, for tags that name no version.
		{Name: "set-labels", Versions: []string{"v0.2"}, Description: "Add or update labels on all resources, their selectors and existing templates.", run: runSetLabelsV02, stream: streamSetLabelsV02, sdkOrder: true},
		{Name: "set-labels", Versions: []string{"v0.1"}, Description: "Add or update labels on all resources, their selectors and templates (v0.1: kustomize's commonLabels field specs).", run: streamed(streamSetLabelsV01), stream: streamSetLabelsV01},
		{Name: "set-namespace", Versions: []string{"v0.1", "v0.2", "v0.3", "v0.4"}, Description: "Set the namespace of all namespaced resources and references to it.", run: runSetNamespace, stream: streamSetNamespace, sdkOrder: true},
		{Name: "starlark", Versions: []string{"v0.1", "v0.2", "v0.3", "v0.4", "v0.5"}, Description: "Run a Starlark script against the resources.", run: runStarlark, readsAll: true, sdkOrder: true},
		{Name: "upsert-resource", Versions: []string{"v0.1", "v0.2"}, Description: "Insert a resource, or replace the existing one with the same identity.", run: runUpsertResource},
	}
}

// All lists every built-in, sorted by name. The slice is the caller's own.
func All() []Function {
	fs := functions()
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Name < fs[j].Name })
	return fs
}

// Lookup finds the built-in for an image reference such as "set-labels:v0.2.0",
// "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2",
// "gcr.io/kpt-fn/set-namespace:v0.4.1", "set-namespace" (no tag), or a
// ":latest" / ":unstable" tag. Any other registry prefix, a digest
// (@sha256:...), or a tag outside Versions returns (nil, false) so the caller
// can fall back to a container runtime: a pinned digest or unknown version
// may behave differently from the code here.
func Lookup(image string) (*Function, bool) {
	if image == "" || strings.Contains(image, "@") {
		return nil, false
	}
	ref, tag := image, ""
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		ref, tag = image[:i], image[i+1:]
		if tag == "" {
			return nil, false
		}
	}
	name := ""
	for _, p := range catalogPrefixes {
		rest, ok := strings.CutPrefix(ref, p)
		if ok && rest != "" && !strings.Contains(rest, "/") {
			name = rest
			break
		}
	}
	if name == "" {
		return nil, false
	}
	for _, f := range functions() {
		if f.Name == name && f.supportsTag(tag) {
			return &f, true
		}
	}
	return nil, false
}

func (f *Function) supportsTag(tag string) bool {
	switch tag {
	case "", "latest", "unstable":
		return true
	}
	line, ok := tagLine(tag)
	if !ok {
		return false
	}
	for _, v := range f.Versions {
		if v == line {
			return true
		}
	}
	return false
}

// tagLine returns "vX.Y" for a tag of the form vX.Y or vX.Y.Z.
func tagLine(tag string) (string, bool) {
	rest, ok := strings.CutPrefix(tag, "v")
	if !ok {
		return "", false
	}
	parts := strings.Split(rest, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return "", false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return "", false
		}
	}
	return "v" + parts[0] + "." + parts[1], true
}

// Run executes the function: r is a KRM ResourceList in YAML (kind
// ResourceList with items and functionConfig), w receives the output
// ResourceList (items and results). It matches kpt's fn.FunctionRunner
// (Run(io.Reader, io.Writer) error).
//
// Like functions built with the kpt function SDK, a failing function still
// writes its ResourceList, with an error result explaining the failure, and
// then returns a non-nil error naming the function and the problem.
func (f *Function) Run(r io.Reader, w io.Writer) error {
	if f == nil || f.run == nil {
		return fmt.Errorf("builtins: function is not runnable; use Lookup or All")
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("%s: reading input: %w", f.Name, err)
	}
	rl, err := resourcelist.Decode(data, f.skip)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	parsed := len(rl.Items)
	rl.Ctx, rl.MaxSteps, rl.Stderr = f.ctx, f.maxSteps, f.stderr
	runErr := f.safeRun(rl)
	if f.sdkOrder {
		sortLikeSDK(rl.Items)
	}
	if rl.Partial() && len(rl.Items) != parsed {
		return fmt.Errorf("%s: internal error: function changed the number of items it was given", f.Name)
	}
	if runErr == nil {
		if e := resourcelist.FirstError(rl.Results); e != nil {
			runErr = fmt.Errorf("%s", e.Message)
		}
	} else if resourcelist.FirstError(rl.Results) == nil && !errors.Is(runErr, errFunctionFailure) {
		rl.Results = append(rl.Results, &fn.Result{Message: runErr.Error(), Severity: fn.Error})
	}
	if err := rl.Encode(w); err != nil {
		return fmt.Errorf("%s: writing output: %w", f.Name, err)
	}
	if runErr != nil {
		return fmt.Errorf("%s: %w", f.Name, runErr)
	}
	return nil
}

// Process runs the function on resources already parsed, with no wire
// format in between: the renderer hands every function of a pipeline the
// same nodes, which is what makes a built-in pipeline fast. items are
// edited in place; the returned slice is the function's output (it may add,
// drop or reorder items). The error, if any, names the function; results
// are returned either way.
func (f *Function) Process(items []*yaml.RNode, functionConfig *yaml.RNode) ([]*yaml.RNode, fn.Results, error) {
	if f == nil || f.run == nil {
		return nil, nil, fmt.Errorf("builtins: function is not runnable; use Lookup or All")
	}
	rl := &resourcelist.List{APIVersion: "config.kubernetes.io/v1", Kind: "ResourceList", Items: items, FunctionConfig: functionConfig, Ctx: f.ctx, MaxSteps: f.maxSteps, Stderr: f.stderr}
	runErr := f.safeRun(rl)
	if f.sdkOrder {
		// the catalog's image hands the next function its items sorted
		sortLikeSDK(rl.Items)
	}
	if runErr == nil {
		if e := resourcelist.FirstError(rl.Results); e != nil {
			runErr = fmt.Errorf("%s", e.Message)
		}
	} else if resourcelist.FirstError(rl.Results) == nil && !errors.Is(runErr, errFunctionFailure) {
		rl.Results = append(rl.Results, &fn.Result{Message: runErr.Error(), Severity: fn.Error})
	}
	if runErr != nil {
		return rl.Items, rl.Results, fmt.Errorf("%s: %w", f.Name, runErr)
	}
	return rl.Items, rl.Results, nil
}

// safeRun turns a panic in a function body (the catalog code uses
// *OrDie helpers) into an error, as a crashing container would be.
func (f *Function) safeRun(rl *resourcelist.List) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("function panicked: %v", p)
		}
	}()
	return f.run(rl)
}
