package render

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins"
	"github.com/kptbot/kptbot/engine/fnrun"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
)

// Runtimes says which function runtimes a render or eval may use; the
// built-ins are always available.
type Runtimes struct {
	// AllowExec permits `exec:` functions (binaries on this machine).
	AllowExec bool
	// AllowContainers permits running images that are not built-in through
	// a container engine.
	AllowContainers bool
	// ContainerEngine is the docker-compatible CLI to use; empty means the
	// first of docker and podman found on PATH.
	ContainerEngine string
}

// FunctionRunner runs a function on the ResourceList read from r, writing
// the ResourceList it returns to w (kpt's fn.FunctionRunner).
type FunctionRunner interface {
	Run(r io.Reader, w io.Writer) error
}

// Runtime is kpt's fn.FunctionRuntime over kptbot's runtimes: built-in
// first, then exec (left to kpt's runner, which enforces AllowExec), then
// a container engine; a function none of them can run is an error naming
// it and what would. The hydrator asks it whether a function can start
// (renderstatus); tests hand it to kpt's renderer.
type Runtime struct {
	Runtimes Runtimes
	maxSteps uint64 // starlark's step limit, 0 for the default
}

// GetRunner is kpt's fn.FunctionRuntime.GetRunner: nil for an exec
// function (kpt's renderer runs those itself).
func (r Runtime) GetRunner(ctx context.Context, f *kptfilev1.Function) (FunctionRunner, error) {
	if f.Exec != "" {
		return nil, nil // kpt's exec runner, gated by RunnerOptions.AllowExec
	}
	if b, ok := builtins.Lookup(f.Image); ok {
		return b.WithContext(ctx).WithStepLimit(r.maxSteps), nil
	}
	engine := r.ContainerEngine()
	if r.Runtimes.AllowContainers && engine != "" {
		return &containerRunner{ctx: ctx, engine: engine, image: f.Image}, nil
	}
	return nil, CannotRun(f.Image, r.Runtimes.AllowContainers, engine)
}

// ContainerEngine is the container engine functions run with: the one
// configured, else the first of docker and podman installed.
func (r Runtime) ContainerEngine() string { return fnrun.FindEngine(r.Runtimes.ContainerEngine) }

// CannotRunError reports a function that no allowed runtime can run.
type CannotRunError struct {
	Image  string
	Reason string
}

func (e *CannotRunError) Error() string {
	return fmt.Sprintf("function %q cannot run: %s", e.Image, e.Reason)
}

// CannotRun is the error for a function image no runtime may run.
func CannotRun(image string, allowContainers bool, engine string) error {
	var why []string
	why = append(why, "it is not a built-in ("+builtins.Explain(image)+"; `kptbot fn list` shows the built-ins and their versions)")
	switch {
	case !allowContainers:
		why = append(why, "container functions are not allowed here")
	case engine == "":
		why = append(why, "no docker or podman on PATH to run it as a container")
	}
	return &CannotRunError{Image: image, Reason: strings.Join(why, "; ") +
		"; to run it, use a built-in version of the function, install docker or podman, or build it as a binary and use exec: with --allow-exec"}
}

// containerRunner runs an image for kpt's renderer (tests' KptRenderer)
// with kptbot's container runner.
type containerRunner struct {
	ctx    context.Context
	engine string
	image  string
}

func (c *containerRunner) Run(r io.Reader, w io.Writer) error {
	_, err := fnrun.Container(c.engine, c.image, fnrun.ContainerOptions{}).Run(c.ctx, r, w)
	return err
}
