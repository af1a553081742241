// Package fnrun runs KRM functions that are processes, exec binaries and
// container images, as kpt's function runner does: the ResourceList on
// stdin and stdout, stderr kept for the function's result, the exit code
// reported, containers started with kpt's isolation flags. `fn render`
// and `fn eval` share it; built-in functions never reach it.
package fnrun

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/google/shlex"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
)

// Timeout is how long a function process may run, as kpt's default.
const Timeout = 5 * time.Minute

// Process is one function run as a process.
type Process struct {
	// Name is the function as kpt names it: the image, or the exec command.
	Name string
	argv []string
	// filter drops the container engine's own lines (image pulls) from
	// the function's stderr.
	filter func(string) string
}

// Exec is an exec: function, its command split as a shell would (kpt's
// shlex), run without a shell.
func Exec(command string) (*Process, error) {
	argv, err := shlex.Split(command)
	if err != nil {
		return nil, fmt.Errorf("exec command %q must be valid: %w", command, err)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("exec command %q must be valid: it names no program", command)
	}
	return &Process{Name: command, argv: argv}, nil
}

// ContainerOptions are the permissions a container function gets; the
// zero value is kpt's render default: no network, user nobody, no
// mounts, no environment, the image pulled if missing.
type ContainerOptions struct {
	// Network lets the function reach the network (--network host).
	Network bool
	// UIDGID runs the container as this uid:gid instead of nobody.
	UIDGID string
	// Pull is always, never or missing (the default).
	Pull string
	// Mounts are docker --mount specifications.
	Mounts []string
	// Env are KEY=VALUE or KEY (exported from kptbot's environment).
	Env []string
}

// Container is a container function run by a docker-compatible engine
// with kpt's flags: `run --rm -i --network none --user nobody
// --security-opt=no-new-privileges --pull missing`, then the mounts, the
// environment (KEY=VALUE pairs sorted by key, then bare keys) and the image.
func Container(engine, image string, o ContainerOptions) *Process {
	network, user, pull := "none", "nobody", "missing"
	if o.Network {
		network = "host"
	}
	if o.UIDGID != "" {
		user = o.UIDGID
	}
	if o.Pull == "always" || o.Pull == "never" {
		pull = o.Pull
	}
	argv := []string{engine, "run", "--rm", "-i", "--network", network, "--user", user,
		"--security-opt=no-new-privileges", "--pull", pull}
	for _, m := range o.Mounts {
		sm := runtimeutil.StringToStorageMount(m)
		argv = append(argv, "--mount", sm.String())
	}
	env := &runtimeutil.ContainerEnv{EnvVars: map[string]string{}}
	for _, e := range o.Env {
		if k, v, ok := strings.Cut(e, "="); ok {
			env.AddKeyValue(k, v)
		} else {
			env.AddKey(e)
		}
	}
	argv = append(argv, env.GetDockerFlags()...)
	argv = append(argv, image)
	return &Process{Name: image, argv: argv, filter: engineOutputFilter(engine)}
}

// Args is the command line the process runs with (program first).
func (p *Process) Args() []string { return append([]string(nil), p.argv...) }

// ExitError is a function process that exited non-zero: its exit code and
// what it wrote to stderr.
type ExitError struct {
	Function string
	ExitCode int
	Stderr   string
}

// Error leaves stderr out: it is in the function's result, and the CLI
// prints it.
func (e *ExitError) Error() string { return fmt.Sprintf("exit code %d", e.ExitCode) }

// Run runs the process with in on stdin and its stdout to out, within
// Timeout. stderr is what the function wrote there (the engine's own pull
// progress left out), also on failure, where the error is an *ExitError
// if the process ran and exited non-zero.
func (p *Process) Run(ctx context.Context, in io.Reader, out io.Writer) (stderr string, err error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	var errSink bytes.Buffer
	cmd := exec.CommandContext(ctx, p.argv[0], p.argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, &errSink
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	stderr = errSink.String()
	if p.filter != nil {
		stderr = p.filter(stderr)
	}
	if runErr != nil {
		var exitErr *exec.ExitError
		if errors.As(runErr, &exitErr) && ctx.Err() == nil {
			return stderr, &ExitError{Function: p.Name, ExitCode: exitErr.ExitCode(), Stderr: stderr}
		}
		if ctx.Err() != nil {
			return stderr, fmt.Errorf("function %s: %w", p.Name, ctx.Err())
		}
		return stderr, fmt.Errorf("unexpected function error: %w", runErr)
	}
	return stderr, nil
}

// engineOutputFilter drops the lines a container engine writes about
// pulling the image, as kpt does for docker, podman and nerdctl.
func engineOutputFilter(engine string) func(string) string {
	name := engine[strings.LastIndex(engine, "/")+1:]
	var drop func(string) bool
	switch name {
	case "podman":
		drop = isPodmanOutput
	case "nerdctl":
		drop = isNerdctlOutput
	default:
		drop = isDockerOutput
	}
	return func(s string) string {
		if s == "" {
			return s
		}
		var lines []string
		sc := bufio.NewScanner(strings.NewReader(s))
		sc.Buffer(make([]byte, 64*1024), 16<<20)
		for sc.Scan() {
			if !drop(sc.Text()) {
				lines = append(lines, sc.Text())
			}
		}
		return strings.Join(lines, "\n")
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func isDockerOutput(s string) bool {
	return containsAny(s, ": Already exists", ": Pulling fs layer", ": Verifying Checksum", ": Download complete",
		": Pulling from", ": Waiting", ": Pull complete", "Digest: sha256", "Status: Downloaded newer image",
		"Status: Image is up to date for", "Unable to find image")
}

// sha256Line reports a line that is a bare image digest.
func sha256Line(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func isPodmanOutput(s string) bool {
	return containsAny(s, "Trying to pull", "Getting image source signatures", "Copying blob sha256:",
		"Copying config sha256:", "Writing manifest to image destination", "Storing signatures") || sha256Line(s)
}

func isNerdctlOutput(s string) bool {
	return containsAny(s, "index-sha256:", "Copying blob sha256:", "manifest-sha256:", "config-sha256:", "layer-sha256:",
		"elapsed:", "++++++++++++++++++++++++++++++++++++++", "--------------------------------------") || sha256Line(s)
}
