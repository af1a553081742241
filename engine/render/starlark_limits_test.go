package render

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// starlarkPackage is a package whose pipeline runs the starlark source.
func starlarkPackage(source string) kptpkg.Tree {
	indented := "    " + strings.ReplaceAll(strings.TrimSpace(source), "\n", "\n    ")
	return kptpkg.Tree{
		kptpkg.KptfileName: []byte(`apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
pipeline:
  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/starlark:v0.5
      configPath: script.yaml
`),
		"script.yaml": []byte(`apiVersion: fn.kpt.dev/v1alpha1
kind: StarlarkRun
metadata:
  name: script
  annotations:
    config.kubernetes.io/local-config: "true"
source: |
` + indented + "\n"),
		"cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n"),
	}
}

// A script from a change's head must not be able to stall the process: an
// endless loop, endless recursion or a growing allocation fails with a
// clear error, through the public render entry point.
func TestStarlarkScriptIsBounded(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, source, want string }{
		{"endless loop", "def f():\n  while True:\n    pass\nf()", "the script ran more than"},
		{"endless recursion", "def f(n):\n  return f(n + 1)\nf(0)", "calls nested more than"},
		{"growing allocation", "def f():\n  x = []\n  while True:\n    x.append('xxxxxxxxxxxxxxxx')\nf()", "the script ran more than"},
		{"network", "load('http.star', 'http')\nhttp.get('http://127.0.0.1:1/')", "functions run without network access"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			_, err := RenderTree(ctx, starlarkPackage(tt.source), RenderOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("render = %v, want an error containing %q", err, tt.want)
			}
			var re *RenderError
			if !errors.As(err, &re) {
				t.Errorf("error is not a RenderError: %T", err)
			}
		})
	}
}

// The process's environment (which may hold the bot's credentials) is not
// the script's: ctx.environment is empty, as in the catalog's container.
func TestStarlarkSeesNoProcessEnvironment(t *testing.T) {
	t.Setenv("KPTBOT_TEST_SECRET", "s3cr3t")
	src := "for r in ctx.resource_list['items']:\n  if r['kind'] == 'ConfigMap': r['data']['env'] = str(len(ctx.environment)) + ':' + ctx.environment.get('KPTBOT_TEST_SECRET', 'unset')"
	res, err := RenderTree(context.Background(), starlarkPackage(src), RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Tree["cm.yaml"]); !strings.Contains(got, "env: 0:unset") {
		t.Errorf("script saw the process environment:\n%s", got)
	}
}

// A script stops when the render's context ends, and scripts of other
// renders run meanwhile: no process-wide lock. Render A loops with no step
// limit until render B, itself running starlark, has completed; only
// then is A's context cancelled. A lock shared by the two would deadlock
// them until the generous deadline.
func TestStarlarkCancelledByContextWhileOthersRun(t *testing.T) {
	t.Parallel()
	ctxA, cancelA := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancelA()
	errA := make(chan error, 1)
	go func() {
		_, err := RenderTree(ctxA, starlarkPackage("def f():\n  while True:\n    pass\nf()"), RenderOptions{StarlarkMaxSteps: math.MaxUint64})
		errA <- err
	}()
	// Give A time to reach its loop (not a timing assertion: if A has not
	// started, the test proves less, never fails wrongly).
	time.Sleep(500 * time.Millisecond)
	ctxB, cancelB := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancelB()
	res, err := RenderTree(ctxB, starlarkPackage("for r in ctx.resource_list['items']:\n  if r['kind'] == 'ConfigMap': r['metadata']['name'] = 'renamed'"), RenderOptions{})
	if err != nil {
		t.Fatalf("render B: %v", err)
	}
	if !strings.Contains(string(res.Tree["cm.yaml"]), "name: renamed") {
		t.Errorf("render B did not run its script:\n%s", res.Tree["cm.yaml"])
	}
	select {
	case err := <-errA:
		t.Fatalf("render A ended before it was cancelled: %v", err)
	default:
	}
	cancelA()
	err = <-errA
	// Stopped inside the script ("the render was stopped (context
	// canceled)") or, on a machine slow enough that A had not reached its
	// script yet, before it: either way by its context.
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("render A = %v, want it stopped by its context", err)
	}
}
