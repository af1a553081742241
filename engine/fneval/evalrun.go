package fneval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"strings"
	"time"

	"github.com/google/shlex"
	"github.com/kptbot/kptbot/engine/builtins"
	"github.com/kptbot/kptbot/engine/render"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
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
// code and what it wrote to stderr.
type FunctionExitError struct {
	Function string
	ExitCode int
	Stderr   string
}

// Error leaves stderr out: it is in the function's result, and the CLI
// prints it (shortened unless --truncate-output=false).
func (e *FunctionExitError) Error() string {
	return fmt.Sprintf("exit code %d", e.ExitCode)
}

// pickRunner chooses how the function runs: an exec binary (with
// --allow-exec), a built-in, or a container engine, as kpt's eval would,
// and names it as kpt prints it.
func (r *evalRun) pickRunner(ctx context.Context) error {
	o := r.opts
	var stderr bytes.Buffer
	r.stderr = func() string { return stderr.String() }
	if o.Exec != "" {
		if c := o.Container; c.Network || c.AsCurrentUser || len(c.Mounts) > 0 || len(c.Env) > 0 {
			return errors.New("--mount, --as-current-user, --network and --env can only be used with container functions")
		}
		if !o.AllowExec {
			return fmt.Errorf("exec function %q: running binaries needs --allow-exec", o.Exec)
		}
		argv, err := shlex.Split(o.Exec)
		if err != nil || len(argv) == 0 {
			return fmt.Errorf("exec command %q must be valid: %v", o.Exec, err)
		}
		r.name = o.Exec
		r.run = func(in io.Reader, out io.Writer) error {
			return runProcess(ctx, o.Exec, exec.CommandContext(ctx, argv[0], argv[1:]...), in, out, &stderr)
		}
		return nil
	}
	image, err := resolveImage(o.Image, o.Tag, o.ImagePrefix)
	if err != nil {
		return err
	}
	r.name = image
	if b, ok := builtins.Lookup(image); ok && !o.Container.requested() {
		r.run = b.WithStderr(&stderr).Run
		return nil
	}
	engine := render.Runtime{Runtimes: o.Runtimes}.ContainerEngine()
	if env := os.Getenv("KPT_FN_RUNTIME"); env != "" && o.ContainerEngine == "" {
		engine = env
	}
	if !o.AllowContainers {
		return render.CannotRun(image, false, engine)
	}
	if engine == "" {
		engine = "docker"
	}
	c := containerCall{engine: engine, image: image, opts: o.Container}
	r.run = func(in io.Reader, out io.Writer) error {
		if err := containerEngineAvailable(ctx, engine); err != nil {
			return err
		}
		args, err := c.args()
		if err != nil {
			return err
		}
		return runProcess(ctx, image, exec.CommandContext(ctx, engine, args...), in, out, &stderr)
	}
	return nil
}

// runProcess runs a function process with a time limit, keeping its
// stderr for the function's result.
func runProcess(ctx context.Context, name string, cmd *exec.Cmd, in io.Reader, out io.Writer, stderr *bytes.Buffer) error {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return &FunctionExitError{Function: name, ExitCode: exitErr.ExitCode(), Stderr: stderr.String()}
		}
		return fmt.Errorf("unexpected function error: %w", err)
	}
	return ctx.Err()
}

// containerCall is kpt's `docker run` for a container function: no
// network, user nobody and no privilege escalation unless asked, the pull
// policy, mounts and environment from the flags.
type containerCall struct {
	engine string
	image  string
	opts   ContainerOptions
}

func (c containerCall) args() ([]string, error) {
	network, uidgid := "none", "nobody"
	if c.opts.Network {
		network = "host"
	}
	if c.opts.AsCurrentUser {
		u, err := user.Current()
		if err != nil {
			return nil, fmt.Errorf("--as-current-user: %w", err)
		}
		uidgid = u.Uid + ":" + u.Gid
	}
	pull := "missing"
	switch c.opts.PullPolicy {
	case "always":
		pull = "always"
	case "never":
		pull = "never"
	}
	args := []string{"run", "--rm", "-i", "--network", network, "--user", uidgid,
		"--security-opt=no-new-privileges", "--pull", pull}
	for _, m := range c.opts.Mounts {
		sm := runtimeutil.StringToStorageMount(m)
		args = append(args, "--mount", sm.String())
	}
	// KEY=VALUE pairs sorted by key, then bare KEYs (docker exports
	// kptbot's value), as kpt passes them.
	env := &runtimeutil.ContainerEnv{EnvVars: map[string]string{}}
	for _, e := range c.opts.Env {
		if k, v, ok := strings.Cut(e, "="); ok {
			env.AddKeyValue(k, v)
		} else {
			env.AddKey(e)
		}
	}
	args = append(args, env.GetDockerFlags()...)
	return append(args, c.image), nil
}

// containerEngineAvailable is kpt's check before running a container
// function, with kpt's message when the engine cannot be used.
func containerEngineAvailable(ctx context.Context, engine string) error {
	name := engine
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	var cmd *exec.Cmd
	var help string
	switch name {
	case "podman":
		cmd = exec.CommandContext(ctx, engine, "version")
		help = "podman must be installed.\nTo install podman, follow the instructions at https://podman.io/getting-started/installation.\n"
	case "nerdctl":
		cmd = exec.CommandContext(ctx, engine, "version")
		help = "nerdctl must be installed.\nTo install nerdctl, follow the instructions at https://github.com/containerd/nerdctl#install.\n"
	default:
		cmd = exec.CommandContext(ctx, engine, "version", "--format", "{{.Client.Version}}")
		help = "docker must be running to use this command\nTo install docker, follow the instructions at https://docs.docker.com/get-docker/.\n"
	}
	cmd.Stdout = &out
	err := cmd.Run()
	if err != nil || (name != "podman" && name != "nerdctl" && out.Len() == 0) {
		return &ContainerEngineError{Engine: engine, Err: err, Help: help}
	}
	return nil
}

// ContainerEngineError is a container engine that cannot run functions,
// with kpt's advice on installing it.
type ContainerEngineError struct {
	Engine string
	Err    error
	Help   string
}

func (e *ContainerEngineError) Error() string { return fmt.Sprintf("%v\n%s", e.Err, e.Help) }
func (e *ContainerEngineError) Unwrap() error { return e.Err }

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
