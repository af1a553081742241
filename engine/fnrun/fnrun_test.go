package fnrun

import (
	"context"
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestStructuredResults: both result forms kpt reads, with the legacy
// resourceRef.metadata and field.suggestedValue lifted as kpt does.
func TestStructuredResults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"list", "- message: ok\n  severity: info\n", "[info]: ok"},
		{"wrapped", "items:\n- message: wrapped\n  severity: warning\n", "[warning]: wrapped"},
		{"legacy-ref", "- message: bad\n  severity: error\n  resourceRef:\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: cm\n      namespace: ns\n",
			"[error] v1/ConfigMap/ns/cm: bad"},
		{"suggested", "- message: fix\n  severity: info\n  field:\n    path: spec.x\n    suggestedValue: 3\n", "[info] spec.x: fix"},
	} {
		rs, err := StructuredResults(yaml.MustParse(tc.in))
		if err != nil || len(rs) != 1 {
			t.Fatalf("%s: %v %v", tc.name, rs, err)
		}
		if got := rs[0].String(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want prefix %q", tc.name, got, tc.want)
		}
		if tc.name == "suggested" && (rs[0].Field == nil || rs[0].Field.ProposedValue == nil) {
			t.Errorf("suggestedValue not lifted: %+v", rs[0].Field)
		}
	}
}

// TestContainerArgs: kpt's `docker run` flags, permissions from the options,
// environment KEY=VALUE sorted then bare keys.
func TestContainerArgs(t *testing.T) {
	t.Parallel()
	got := strings.Join(Container("docker", "img:v1", ContainerOptions{}).Args(), " ")
	if want := "docker run --rm -i --network none --user nobody --security-opt=no-new-privileges --pull missing img:v1"; got != want {
		t.Errorf("default: %q, want %q", got, want)
	}
	got = strings.Join(Container("/usr/bin/podman", "img", ContainerOptions{Network: true, UIDGID: "1:2", Pull: "never", Env: []string{"B=2", "HOME", "A=1"}}).Args(), " ")
	if want := "/usr/bin/podman run --rm -i --network host --user 1:2 --security-opt=no-new-privileges --pull never -e A=1 -e B=2 -e HOME img"; got != want {
		t.Errorf("options: %q, want %q", got, want)
	}
}

// TestRunStderrAndExit: stderr is kept, a non-zero exit is an *ExitError
// with its code, the engine's pull lines are dropped from a container's.
func TestRunStderrAndExit(t *testing.T) {
	t.Parallel()
	p, err := Exec(`/bin/sh -c 'cat; echo oops >&2; exit 4'`)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	stderr, err := p.Run(context.Background(), strings.NewReader("in\n"), &out)
	var exit *ExitError
	if !errors.As(err, &exit) || exit.ExitCode != 4 || stderr != "oops\n" || out.String() != "in\n" {
		t.Errorf("run: err %v, stderr %q, out %q", err, stderr, out.String())
	}
	if got := engineOutputFilter("docker")("Unable to find image 'x' locally\nv1: Pulling from x\nreal problem\n"); got != "real problem" {
		t.Errorf("docker filter: %q", got)
	}
	if _, err := Exec(`"unterminated`); err == nil {
		t.Error("an unparsable exec command was accepted")
	}
}
