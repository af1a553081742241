// Package starlarkfn is the catalog's starlark function (StarlarkRun
// configs, the catalog's modules and dialect) run in-process with bounds: a
// step limit, a call depth limit, the caller's context, no network and no
// process environment.
package starlarkfn

import (
	"context"
	"fmt"
	"io"

	"github.com/kptdev/krm-functions-catalog/functions/go/starlark/krmfn"
	catalog "github.com/kptdev/krm-functions-catalog/functions/go/starlark/starlark"
	sl "github.com/kptdev/krm-functions-catalog/functions/go/starlark/third_party/sigs.k8s.io/kustomize/kyaml/fn/runtime/starlark"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/qri-io/starlib/bsoup"
	"github.com/qri-io/starlib/encoding/base64"
	"github.com/qri-io/starlib/encoding/csv"
	"github.com/qri-io/starlib/encoding/json"
	slyaml "github.com/qri-io/starlib/encoding/yaml"
	"github.com/qri-io/starlib/geo"
	"github.com/qri-io/starlib/hash"
	"github.com/qri-io/starlib/html"
	"github.com/qri-io/starlib/math"
	"github.com/qri-io/starlib/re"
	sltime "github.com/qri-io/starlib/time"
	"github.com/qri-io/starlib/util"
	"github.com/qri-io/starlib/xlsx"
	"github.com/qri-io/starlib/zipfile"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// Starlark limits. A script from a change's head must not be able to stall
// the process: it runs on its own thread, stopped after a number of steps
// that grows with the package, when its call stack gets deeper than any
// real script needs (recursion runs on the Go stack, whose overflow would
// kill the process), and as soon as the render's context is done.
const (
	// BaseSteps is the step limit of a script over an empty package.
	BaseSteps = 10_000_000
	// StepsPerResource is added to BaseSteps per resource.
	StepsPerResource = 2_000
	// MaxCallDepth bounds nested calls (recursion).
	MaxCallDepth = 5_000
	// starlarkCheckEvery is how often (in steps) the limits and the
	// context are checked.
	starlarkCheckEvery = 10_000
)

// starlarkOptions are the catalog's dialect (set, global reassignment,
// recursion), given per file: the catalog sets go.starlark.net's
// package-level resolve flags on every run instead, a data race between
// concurrent renders that used to need a process-wide lock.
// The flags map as syntax.LegacyFileOptions maps the catalog's.
var starlarkOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}

// Process is the catalog's starlark Process (config, errors as a
// single error result) with the script run by runStarlarkScript. What the
// script prints goes to stderr, one line per print as the catalog's
// container writes it to its standard error (nil discards it).
func Process(ctx context.Context, maxSteps uint64, stderr io.Writer, rl *fn.ResourceList) (bool, error) {
	err := func() error {
		sr := &catalog.StarlarkRun{}
		if err := sr.Config(rl.FunctionConfig); err != nil {
			return err
		}
		return transformStarlark(ctx, sr, rl, maxSteps, stderr)
	}()
	if err != nil {
		rl.Results = []*fn.Result{{Message: err.Error(), Severity: fn.Error}}
		return false, nil
	}
	return true, nil
}

// transformStarlark is the catalog's StarlarkRun.Transform and
// SimpleFilter.Filter: the items and the function config wrapped in a
// ResourceList, converted to Starlark values, run, and converted back
// (convert.go).
func transformStarlark(ctx context.Context, sr *catalog.StarlarkRun, rl *fn.ResourceList, maxSteps uint64, stderr io.Writer) error {
	value, err := resourceListValue(rl)
	if err != nil {
		return err
	}
	if maxSteps == 0 {
		maxSteps = uint64(BaseSteps + StepsPerResource*len(rl.Items))
	}
	if err := runStarlarkScript(ctx, sr.Name, sr.Source, value, maxSteps, stderr); err != nil {
		return err
	}
	objs, err := resourceListItems(value)
	if err != nil {
		return err
	}
	rl.Items = objs
	return nil
}

// runStarlarkScript runs program with the catalog's predeclared ctx (the
// resource list, the OpenAPI schema, an environment) on a thread bounded
// by maxSteps, MaxCallDepth and ctx.
func runStarlarkScript(ctx context.Context, name, program string, resourceList starlark.Value, maxSteps uint64, stderr io.Writer) error {
	if stderr == nil {
		stderr = io.Discard
	}
	// print() would otherwise write to this process's own stderr: into a
	// server's log, interleaved across concurrent renders.
	thread := &starlark.Thread{Name: name, Load: loadStarlarkModule, Print: func(_ *starlark.Thread, msg string) { fmt.Fprintln(stderr, msg) }}
	thread.SetMaxExecutionSteps(starlarkCheckEvery)
	thread.OnMaxSteps = func(t *starlark.Thread) {
		switch {
		case ctx.Err() != nil:
			t.Cancel(fmt.Sprintf("the render was stopped (%v)", context.Cause(ctx)))
		case t.Steps >= maxSteps:
			t.Cancel(fmt.Sprintf("the script ran more than %d steps (an endless loop?)", maxSteps))
		case t.CallStackDepth() > MaxCallDepth:
			t.Cancel(fmt.Sprintf("calls nested more than %d deep (endless recursion?)", MaxCallDepth))
		default:
			t.SetMaxExecutionSteps(t.Steps + starlarkCheckEvery)
		}
	}
	// Stop at once, not at the next check, when the context ends.
	stop := context.AfterFunc(ctx, func() { thread.Cancel(fmt.Sprintf("the render was stopped (%v)", context.Cause(ctx))) })
	defer stop()
	// The catalog's container sees its own, empty-handed environment; the
	// process's environment here may hold credentials.
	env, err := util.Marshal(map[string]interface{}{})
	if err != nil {
		return err
	}
	predeclared := starlark.StringDict{
		"ctx": starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
			"resource_list": resourceList,
			"open_api":      &sl.LazyInitializationOpenapi{},
			"environment":   env,
		}),
	}
	_, err = starlark.ExecFileOptions(starlarkOptions, thread, name, program, predeclared)
	return err
}

// loadStarlarkModule is the catalog's module loader without http: kpt runs
// the catalog's container without network access.
func loadStarlarkModule(_ *starlark.Thread, module string) (starlark.StringDict, error) {
	switch module {
	case bsoup.ModuleName:
		return bsoup.LoadModule()
	case base64.ModuleName:
		return base64.LoadModule()
	case csv.ModuleName:
		return csv.LoadModule()
	case json.ModuleName:
		return starlark.StringDict{"json": json.Module}, nil
	case slyaml.ModuleName:
		return slyaml.LoadModule()
	case geo.ModuleName:
		return geo.LoadModule()
	case hash.ModuleName:
		return hash.LoadModule()
	case html.ModuleName:
		return html.LoadModule()
	case math.ModuleName:
		return starlark.StringDict{"math": math.Module}, nil
	case re.ModuleName:
		return re.LoadModule()
	case sltime.ModuleName:
		return starlark.StringDict{"time": sltime.Module}, nil
	case xlsx.ModuleName:
		return xlsx.LoadModule()
	case zipfile.ModuleName:
		return zipfile.LoadModule()
	case krmfn.ModuleName:
		return starlark.StringDict{"krmfn": krmfn.Module}, nil
	case "http.star":
		return nil, fmt.Errorf("load(%q): functions run without network access", module)
	}
	return nil, nil
}
