package fnrun

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// FindEngine is the container engine to use: the one configured, else
// the first of docker and podman on PATH; empty when there is none.
func FindEngine(configured string) string {
	if configured != "" {
		return configured
	}
	for _, e := range []string{"docker", "podman"} {
		if p, err := exec.LookPath(e); err == nil {
			return p
		}
	}
	return ""
}

// EngineError is a container engine that cannot run functions, with
// kpt's advice on installing it.
type EngineError struct {
	Engine string
	Err    error
	Help   string
}

func (e *EngineError) Error() string { return fmt.Sprintf("%v\n%s", e.Err, e.Help) }
func (e *EngineError) Unwrap() error { return e.Err }

// CheckEngine is kpt's check before running a container function: the
// engine answers `version` (docker: with a client version), else an
// *EngineError with kpt's message.
func CheckEngine(ctx context.Context, engine string) error {
	name := engine[strings.LastIndex(engine, "/")+1:]
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
		return &EngineError{Engine: engine, Err: err, Help: help}
	}
	return nil
}
