package fneval

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/render"
)

const evalPkgKptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"

func evalPackage() kptpkg.Tree {
	return kptpkg.Tree{
		kptpkg.KptfileName: []byte(evalPkgKptfile),
		"app.yaml": []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    tier: front
spec:
  replicas: 1 # keep me
---
apiVersion: v1
kind: Service
metadata:
  name: web
  labels:
    tier: back
`),
		"db/Kptfile": []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: db\n"),
		"db/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db\n  labels:\n    tier: back\ndata:\n  a: \"1\"\n"),
	}
}

func TestArgsConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		want    string
		wantErr string
	}{
		{nil, "metadata:\n  name: function-input\ndata: {}\nkind: ConfigMap\napiVersion: v1\n", ""},
		// kpt builds the config from "data: {}", so the data stays in flow style.
		{[]string{"a=1", "b=x=y"}, "metadata:\n  name: function-input\ndata: {a: \"1\", b: x=y}\nkind: ConfigMap\napiVersion: v1\n", ""},
		{[]string{"SetNamespace", "namespace=x"}, "metadata:\n  name: function-input\ndata: {namespace: x}\nkind: SetNamespace\napiVersion: v1\n", ""},
		{[]string{"a=1", "oops"}, "", `"oops": args must have keys and values separated by =`},
	}
	for _, tc := range tests {
		n, err := argsConfig(tc.args)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("argsConfig(%q) error = %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("argsConfig(%q): %v", tc.args, err)
		}
		if got := n.MustString(); got != tc.want {
			t.Errorf("argsConfig(%q) =\n%s\nwant\n%s", tc.args, got, tc.want)
		}
	}
	if m := argsConfigMap([]string{"Kind", "a=1"}); len(m) != 1 || m["a"] != "1" {
		t.Errorf("argsConfigMap kept the kind argument: %v", m)
	}
}

func TestResolveImageTag(t *testing.T) {
	t.Parallel()
	const cat = "ghcr.io/kptdev/krm-functions-catalog/"
	tests := []struct{ image, tag, want, wantErr string }{
		{"set-namespace", "", cat + "set-namespace", ""},
		{"set-namespace:v0.1", "v0.4.5", cat + "set-namespace:v0.4.5", ""},
		{"gcr.io/kpt-fn/set-labels:v0.1@sha256:abc", "v0.2", "gcr.io/kpt-fn/set-labels:v0.2", ""},
		{"set-namespace", "latest", cat + "set-namespace:latest", ""},
		{"set-namespace", "~0.3", cat + "set-namespace:v0.3", ""},
		{"set-namespace", "^0.2", cat + "set-namespace:v0.2", ""},
		{"set-namespace", ">=0.2 <0.4", cat + "set-namespace:v0.3", ""},
		{"set-namespace", ">0.1, <=0.2", cat + "set-namespace:v0.2", ""},
		{"set-namespace", "0.2.x || 0.1.x", cat + "set-namespace:v0.2", ""},
		{"set-namespace", ">=0.1", cat + "set-namespace:v0.4", ""},
		{"set-namespace", "^1.0", "", "no tag could be found matching the version constraint"},
		{"example.com/fn", "~1.2", "", "not a built-in"},
		{"set-namespace", "bad!tag", "", "must be a valid image tag"},
	}
	for _, tc := range tests {
		got, err := resolveImage(tc.image, tc.tag, "")
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("resolveImage(%q, %q) = %q, %v; want error %q", tc.image, tc.tag, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("resolveImage(%q, %q) = %q, %v; want %q", tc.image, tc.tag, got, err, tc.want)
		}
	}
}

func TestEvalSelectors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in := evalPackage()
	opts := EvalOptions{Image: "set-labels:v0.2", Args: []string{"color=red"},
		Selector:  kptfilev1.Selector{Labels: map[string]string{"tier": "back"}},
		Exclusion: kptfilev1.Selector{Kind: "ConfigMap"}}
	res, err := EvalTree(ctx, in, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Selected != 1 {
		t.Errorf("selected %d resources, want 1 (the Service)", res.Selected)
	}
	app := string(res.Tree["app.yaml"])
	deployment, _, _ := strings.Cut(app, "---")
	if deployment != strings.Split(string(in["app.yaml"]), "---")[0] || !strings.Contains(app, "tier: back\n    color: red") {
		t.Errorf("only the Service should be labelled:\n%s", app)
	}
	if !strings.Contains(app, "replicas: 1 # keep me") || strings.Contains(app, "kpt-resource-id") {
		t.Errorf("unselected Deployment changed or IDs left behind:\n%s", app)
	}
	if !bytes.Equal(res.Tree["db/cm.yaml"], in["db/cm.yaml"]) {
		t.Errorf("excluded ConfigMap changed:\n%s", res.Tree["db/cm.yaml"])
	}
	if res.Modified == nil || len(res.Modified) != 1 || res.Modified[0] != "app.yaml" {
		t.Errorf("modified = %v, want [app.yaml]", res.Modified)
	}
	// Without a selection every resource is the function's, subpackages too.
	res, err = EvalTree(ctx, in, EvalOptions{Image: "set-labels:v0.2", Args: []string{"color=red"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Selected != -1 || !strings.Contains(string(res.Tree["db/cm.yaml"]), "color: red") {
		t.Errorf("unselected eval missed the subpackage (selected %d):\n%s", res.Selected, res.Tree["db/cm.yaml"])
	}
}

func TestEvalExecArgsAndFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in := evalPackage()
	// Arguments are split as a shell would: the quoted script is one.
	res, err := EvalTree(ctx, in, EvalOptions{Runtimes: render.Runtimes{AllowExec: true}, Exec: `/bin/sh -c 'cat; echo "note from fn" >&2'`})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Modified)+len(res.Added)+len(res.Removed) != 0 {
		t.Errorf("identity function changed files: %v %v %v", res.Added, res.Removed, res.Modified)
	}
	if got := res.Results.Items[0]; got.ExecPath == "" || got.ExitCode != 0 || got.Stderr != "note from fn\n" {
		t.Errorf("result = %+v, want the exec path, exit 0 and its stderr", got)
	}
	res, err = EvalTree(ctx, in, EvalOptions{Runtimes: render.Runtimes{AllowExec: true}, Exec: `/bin/sh -c 'echo broken >&2; exit 3'`})
	var exit *FunctionExitError
	if !errors.As(err, &exit) || exit.ExitCode != 3 {
		t.Fatalf("failing function: err %v, want exit code 3", err)
	}
	if got := res.Results.Items[0]; got.ExitCode != 3 || got.Stderr != "broken\n" || res.Results.ExitCode != 1 {
		t.Errorf("failed result = %+v (list exit %d)", got, res.Results.ExitCode)
	}
	if res.Tree != nil {
		t.Error("a failed eval returned a package to write")
	}
	for _, tc := range []struct {
		opts EvalOptions
		want string
	}{
		{EvalOptions{Exec: "/bin/cat"}, "needs --allow-exec"},
		{EvalOptions{Runtimes: render.Runtimes{AllowExec: true}, Exec: "/bin/cat", Container: ContainerOptions{Env: []string{"A=b"}}},
			"--mount, --as-current-user, --network and --env can only be used with container functions"},
		{EvalOptions{Image: "set-labels:v0.2", FnConfig: []byte("kind: X\n"), Args: []string{"a=b"}}, "function arguments can only be specified without function config file"},
		{EvalOptions{Image: "x", Exec: "y"}, "exactly one of --image and --exec"},
	} {
		if _, err := EvalTree(ctx, in, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// fakeEngine writes a docker-compatible CLI that records its arguments
// and runs the "function" as cat, or one whose daemon is down.
func fakeEngine(t *testing.T, up bool) (engine, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	script := "#!/bin/sh\nif [ \"$1\" = version ]; then echo 24.0.7; exit 0; fi\nprintf '%s\\n' \"$@\" > " + argsFile + "\nexec cat\n"
	if !up {
		script = "#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n"
	}
	engine = filepath.Join(dir, "docker")
	if err := os.WriteFile(engine, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return engine, argsFile
}

func TestEvalContainerOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, argsFile := fakeEngine(t, true)
	src := t.TempDir()
	opts := EvalOptions{
		Runtimes: render.Runtimes{AllowContainers: true, ContainerEngine: engine},
		// A built-in: the container flags still send it to the engine.
		Image: "set-namespace:v0.4",
		Container: ContainerOptions{Network: true, Mounts: []string{"type=bind,src=" + src + ",dst=/data"},
			Env: []string{"HOME", "Z=1", "A=b"}, PullPolicy: "never"},
	}
	if _, err := EvalTree(ctx, evalPackage(), opts); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatalf("the container engine was not used: %v", err)
	}
	want := "run\n--rm\n-i\n--network\nhost\n--user\nnobody\n--security-opt=no-new-privileges\n--pull\nnever\n" +
		"--mount\ntype=bind,source=" + src + ",target=/data,readonly\n-e\nA=b\n-e\nZ=1\n-e\nHOME\nghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4\n"
	if string(b) != want {
		t.Errorf("engine arguments:\n%s\nwant\n%s", b, want)
	}
	// Without the flags the built-in runs in-process.
	os.Remove(argsFile)
	opts.Container = ContainerOptions{}
	if _, err := EvalTree(ctx, evalPackage(), EvalOptions{Runtimes: opts.Runtimes, Image: opts.Image, Args: []string{"namespace=x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(argsFile); err == nil {
		t.Error("a built-in without container flags went to the container engine")
	}
	// An engine that cannot run containers: kpt's message.
	down, _ := fakeEngine(t, false)
	opts.ContainerEngine, opts.Container = down, ContainerOptions{Network: true}
	_, err = EvalTree(ctx, evalPackage(), opts)
	var ce *ContainerEngineError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "exit status 1\ndocker must be running to use this command\nTo install docker") {
		t.Errorf("engine down: %v", err)
	}
	opts.ContainerEngine = filepath.Join(t.TempDir(), "docker")
	if _, err = EvalTree(ctx, evalPackage(), opts); err == nil || !strings.Contains(err.Error(), "docker must be running to use this command") {
		t.Errorf("no engine: %v", err)
	}
}

func TestEvalReaderResourceList(t *testing.T) {
	t.Parallel()
	rl := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
- apiVersion: v1
  kind: Secret
  metadata:
    name: b
`
	res, err := EvalReader(context.Background(), strings.NewReader(rl), EvalOptions{Image: "set-namespace:v0.4", Args: []string{"namespace=piped"},
		Selector: kptfilev1.Selector{Kind: "Secret"}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteEvalOutput(&out, "stdout", res.Resources); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.HasPrefix(s, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n") || strings.Count(s, "namespace: piped") != 1 ||
		!strings.Contains(s, "kind: Secret\n  metadata:\n    name: b\n    namespace: piped") {
		t.Errorf("stdin eval output:\n%s", s)
	}
}

func TestSaveFunction(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, kptpkg.KptfileName), []byte("# the team's package\n"+evalPkgKptfile), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := EvalOptions{Image: "set-labels:v0.2", Args: []string{"color=red"}, Selector: kptfilev1.Selector{Kind: "Service"}}
	f, err := SavedFunction(dir, opts, "")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := SaveFunction(dir, "mutator", f)
	if err != nil || msg != `Added "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2" as mutator in the Kptfile.` {
		t.Fatalf("save: %q, %v", msg, err)
	}
	opts.Args = []string{"color=blue"}
	f, _ = SavedFunction(dir, opts, "")
	if msg, err = SaveFunction(dir, "mutator", f); err != nil || !strings.HasPrefix(msg, "Updated ") {
		t.Fatalf("second save: %q, %v", msg, err)
	}
	cfg := filepath.Join(dir, "fns", "validate.yaml")
	f, err = SavedFunction(dir, EvalOptions{Exec: "./check --strict"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SaveFunction(dir, "validator", f); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, kptpkg.KptfileName))
	want := "# the team's package\n" + evalPkgKptfile + `pipeline:
  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2
      configMap:
        color: blue
      selectors:
        - kind: Service
  validators:
    - exec: ./check --strict
      configPath: fns/validate.yaml
`
	if string(b) != want {
		t.Errorf("Kptfile:\n%s\nwant\n%s", b, want)
	}
	if _, err := SavedFunction(dir, opts, filepath.Join(filepath.Dir(dir), "outside.yaml")); err == nil || !strings.Contains(err.Error(), "--fn-config must be under") {
		t.Errorf("config outside the package: %v", err)
	}
	if _, err := SaveFunction(t.TempDir(), "mutator", f); !errors.Is(err, ErrNoKptfile) {
		t.Errorf("no Kptfile: %v", err)
	}
}
