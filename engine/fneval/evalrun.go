package fneval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins"
	"github.com/kptbot/kptbot/engine/fnrun"
	"github.com/kptbot/kptbot/engine/render"
)

// ContainerOptions are kpt's eval flags that only a container engine can
// honour. Setting any of them runs the function in a container even when
// a built-in implements it: the built-ins have no network, mounts or
// environment to give.
type ContainerOptions struct {
	// Network lets the function reach the network (--network).
	Network bool
	// Mounts are docker --mount specifications (--mount).
	Mounts []string
	// Env are KEY=VALUE or KEY (exported from kptbot's environment) (--env).
	Env []string
	// AsCurrentUser runs the container as kptbot's uid:gid instead of
	// nobody (--as-current-user).
	AsCurrentUser bool
	// PullPolicy is always, ifNotPresent or never (--image-pull-policy);
	// empty means ifNotPresent and does not by itself ask for a container.
	PullPolicy string
}

func (c ContainerOptions) requested() bool {
	return c.Network || len(c.Mounts) > 0 || len(c.Env) > 0 || c.AsCurrentUser || c.PullPolicy != ""
}

// ParsePullPolicy reads kpt's --image-pull-policy values (any case).
func ParsePullPolicy(s string) (string, error) {
	switch strings.ToLower(s) {
	case "always":
		return "always", nil
	case "ifnotpresent":
		return "ifNotPresent", nil
	case "never":
		return "never", nil
	}
	return "", fmt.Errorf("--image-pull-policy %q: must be one of Always, IfNotPresent, Never", s)
}

// FunctionExitError is a function process that exited non-zero: its exit
// code and what it wrote to stderr (engine/fnrun, shared with render).
type FunctionExitError = fnrun.ExitError

// ContainerEngineError is a container engine that cannot run functions,
// with kpt's advice on installing it.
type ContainerEngineError = fnrun.EngineError

// pickRunner chooses how the function runs: an exec binary (with
// --allow-exec), a built-in, or a container engine, as kpt's eval would,
// and names it as kpt prints it. Processes run through engine/fnrun, the
// runner `fn render` uses.
func (r *evalRun) pickRunner(ctx context.Context) error {
	o := r.opts
	var stderr string
	var builtinStderr strings.Builder
	r.stderr = func() string { return stderr + builtinStderr.String() }
	if o.Exec != "" {
		if c := o.Container; c.Network || c.AsCurrentUser || len(c.Mounts) > 0 || len(c.Env) > 0 {
			return errors.New("--mount, --as-current-user, --network and --env can only be used with container functions")
		}
		if !o.AllowExec {
			return fmt.Errorf("exec function %q: running binaries needs --allow-exec", o.Exec)
		}
		proc, err := fnrun.Exec(o.Exec)
		if err != nil {
			return err
		}
		r.name = o.Exec
		r.run = func(in io.Reader, out io.Writer) (err error) {
			stderr, err = proc.Run(ctx, in, out)
			return err
		}
		return nil
	}
	image, err := resolveImage(o.Image, o.Tag, o.ImagePrefix)
	if err != nil {
		return err
	}
	r.name = image
	if b, ok := builtins.Lookup(image); ok && !o.Container.requested() {
		r.run = builtinRunner(b, image, &builtinStderr)
		return nil
	}
	engine := fnrun.FindEngine(o.ContainerEngine)
	if env := os.Getenv("KPT_FN_RUNTIME"); env != "" && o.ContainerEngine == "" {
		engine = env
	}
	if !o.AllowContainers {
		return render.CannotRun(image, false, engine)
	}
	if engine == "" {
		engine = "docker"
	}
	copts, err := o.Container.forEngine()
	if err != nil {
		return err
	}
	proc := fnrun.Container(engine, image, copts)
	r.run = func(in io.Reader, out io.Writer) (err error) {
		if err := fnrun.CheckEngine(ctx, engine); err != nil {
			return err
		}
		stderr, err = proc.Run(ctx, in, out)
		return err
	}
	return nil
}

// forEngine is the container's permissions from kpt's eval flags.
func (c ContainerOptions) forEngine() (fnrun.ContainerOptions, error) {
	o := fnrun.ContainerOptions{Network: c.Network, Pull: c.PullPolicy, Mounts: c.Mounts, Env: c.Env}
	if c.AsCurrentUser {
		u, err := user.Current()
		if err != nil {
			return o, fmt.Errorf("--as-current-user: %w", err)
		}
		o.UIDGID = u.Uid + ":" + u.Gid
	}
	return o, nil
}

// resolveImage qualifies an image without a registry with the prefix and
// applies --tag.
func resolveImage(image, tag, prefix string) (string, error) {
	if !strings.Contains(image, "/") {
		if prefix == "" {
			prefix = render.DefaultImagePrefix
		}
		image = strings.TrimSuffix(prefix, "/") + "/" + image
	}
	if tag == "" {
		return image, nil
	}
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	if exactVersion(tag) || !looksConstraint(tag) {
		if !validTag(tag) {
			return "", fmt.Errorf("--tag %q must be a valid image tag: must start with an alphanumeric character or underscore, followed by at most 127 alphanumeric characters, underscores, periods, or dashes", tag)
		}
		return ref + ":" + tag, nil
	}
	b, ok := builtins.Lookup(ref)
	if !ok {
		return "", fmt.Errorf("--tag %q: kptbot matches version constraints against the built-in functions' versions, and %s is not a built-in (give an exact tag)", tag, ref)
	}
	best, err := highestMatching(tag, b.Versions)
	if err != nil {
		return "", err
	}
	return ref + ":" + best, nil
}

func validTag(t string) bool {
	if t == "" || len(t) > 128 {
		return false
	}
	for i, c := range t {
		alnum := c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alnum && (i == 0 || (c != '.' && c != '-')) {
			return false
		}
	}
	return true
}
