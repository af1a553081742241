package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// evalE2EConfig is the part of kpt's e2e .expected/config.yaml
// (pkg/test/runner/config.go) that eval cases use.
type evalE2EConfig struct {
	ExitCode             int               `json:"exitCode"`
	StdOut               string            `json:"stdOut"`
	StdErr               string            `json:"stdErr"`
	StdErrRegEx          string            `json:"stdErrRegEx"`
	RunCount             int               `json:"runCount"`
	Image                string            `json:"image"`
	Tag                  string            `json:"tag"`
	ExecPath             string            `json:"execPath"`
	FnConfig             string            `json:"fnConfig"`
	Args                 map[string]string `json:"args"`
	IncludeMetaResources bool              `json:"includeMetaResources"`
	Skip                 bool              `json:"skip"`
	StdErrStripLines     []string          `json:"stdErrStripLines"`
}

// evalE2ESkips names why kptbot does not match a case of kpt's, so the
// differences stay visible.
var evalE2ESkips = map[string]string{}

// kptEvalE2ECases is how many fn-eval cases kpt v1.0.0-beta.67 has
// (e2e/testdata/fn-eval, a directory per .expected).
const kptEvalE2ECases = 59

// evalE2ENotRun are kpt's cases left out of testdata/kpt-e2e-eval, each
// with why: all need what this machine and kptbot's built-ins do not
// have.
var evalE2ENotRun = map[string]string{
	"error-in-pipe":                     "exec.sh pipes into an image that does not exist (a container engine's pull error)",
	"function-env":                      "exec.sh runs the printenv image, not built in (needs a container engine)",
	"no-image-pull":                     "exec.sh inspects the image with the container engine (docker image inspect)",
	"privilege-options/disable-network": "runs the kubeconform image, not built in (needs a container engine)",
	"privilege-options/mount":           "runs the kubeconform image, not built in (needs a container engine and the network)",
	"image-pull-policy-always":          "runs an image that is not built in and checks the container engine's pull (setup.sh uses docker)",
	"image-pull-policy-if-not-present":  "runs an image that is not built in and checks the container engine's pull (setup.sh uses docker)",
	"image-pull-policy-never":           "expects the container engine's \"No such image\" error",
	"missing-fn-image":                  "expects the container engine's pull error for an image that does not exist",
	"no-op":                             "runs the no-op image, not built in (needs a container engine)",
	"preserve-comments":                 "runs the drop-comments image, not built in (needs a container engine)",
	"wasm-function":                     "runs a WebAssembly function (--allow-alpha-wasm, not implemented)",
}

// asCLIEnv makes the test binary run as the kptbot CLI (TestMain), for the
// `kpt` wrapper kpt's exec.sh cases call.
const asCLIEnv = "KPTBOT_TEST_AS_CLI"

// kptWrapper writes a `kpt` that is kptbot (this test binary as the CLI)
// into a directory for PATH. kptbot's eval runs a binary only with
// --allow-exec (a deliberate difference, docs/kpt-compatibility.md), so
// the wrapper adds it to an eval given --exec.
func kptWrapper(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := `#!/bin/sh
if [ "$1" = fn ] && [ "$2" = eval ]; then
  for a in "$@"; do
    case "$a" in
      --exec|--exec=*) shift 2; set -- fn eval --allow-exec "$@"; break ;;
    esac
  done
fi
` + asCLIEnv + `=1 exec '` + self + `' "$@"
`
	if err := os.WriteFile(filepath.Join(dir, "kpt"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestEvalE2ECoverage accounts for every fn-eval case of kpt's: run from
// testdata or named in evalE2ENotRun with the reason, never both.
func TestEvalE2ECoverage(t *testing.T) {
	t.Parallel()
	cases := evalE2ECases(t, filepath.Join("testdata", "kpt-e2e-eval"))
	scripted := 0
	for _, c := range cases {
		if _, ok := evalE2ENotRun[c]; ok {
			t.Errorf("%s is in testdata and listed as not run", c)
		}
		if fileSize(filepath.Join("testdata", "kpt-e2e-eval", c, ".expected", "exec.sh")) > 0 {
			scripted++
		}
	}
	if got := len(cases) + len(evalE2ENotRun); got != kptEvalE2ECases {
		t.Errorf("%d cases run + %d not run = %d, kpt has %d", len(cases), len(evalE2ENotRun), got, kptEvalE2ECases)
	}
	t.Logf("kpt's fn-eval cases: %d run (%d through exec.sh, %d by config; %d listed as differing), %d not run", len(cases), scripted, len(cases)-scripted, len(evalE2ESkips), len(evalE2ENotRun))
}

func evalE2ECases(t *testing.T, root string) []string {
	t.Helper()
	var cases []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".expected" {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			cases = append(cases, filepath.ToSlash(rel))
			return filepath.SkipDir
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(cases)
	return cases
}

// TestEvalMatchesKptE2E runs kpt's own fn eval end-to-end cases
// (testdata/kpt-e2e-eval: e2e/testdata/fn-eval of kpt v1.0.0-beta.67,
// copied as they are) through `kptbot fn eval` with the flags kpt's e2e
// runner builds from each case's config, in a copy of the case, and
// requires kpt's exit code, that stdout and stderr contain what the case
// expects (as kpt's runner checks), and the package the case's
// .expected/diff.patch describes, byte for byte.
func TestEvalMatchesKptE2E(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed to apply the expected diffs")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is needed to run the exec.sh cases")
	}
	root := filepath.Join("testdata", "kpt-e2e-eval")
	cases := evalE2ECases(t, root)
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	kptDir := kptWrapper(t)
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			if why, ok := evalE2ESkips[name]; ok {
				t.Skip(why)
			}
			runEvalE2ECase(t, root, name, kptDir)
		})
	}
}

func runEvalE2ECase(t *testing.T, root, name, kptDir string) {
	top := strings.Split(name, "/")[0]
	var cfg evalE2EConfig
	b, err := os.ReadFile(filepath.Join(root, name, ".expected", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if cfg.Skip {
		t.Skip("kpt skips this case")
	}
	runs := max(cfg.RunCount, 1)
	for i := 0; i < runs; i++ {
		tmp := t.TempDir()
		if err := os.CopyFS(filepath.Join(tmp, top), os.DirFS(filepath.Join(root, top))); err != nil {
			t.Fatal(err)
		}
		pkg := filepath.Join(tmp, name)
		want := filepath.Join(t.TempDir(), "want")
		if err := os.CopyFS(want, os.DirFS(pkg)); err != nil {
			t.Fatal(err)
		}
		if patch := filepath.Join(want, ".expected", "diff.patch"); fileSize(patch) > 0 {
			cmd := exec.Command("git", "apply", "--whitespace=nowarn", patch)
			cmd.Dir = want
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("applying kpt's expected diff: %v: %s", err, out)
			}
		}
		var stdout, stderr bytes.Buffer
		var code int
		var args []string
		if script := filepath.Join(pkg, ".expected", "exec.sh"); fileSize(script) > 0 {
			// as kpt's runner: bash exec.sh in the package, `kpt` on PATH
			args = []string{"bash", script}
			cmd := exec.Command("bash", script)
			cmd.Dir = pkg
			cmd.Env = append(os.Environ(), "PATH="+kptDir+string(os.PathListSeparator)+os.Getenv("PATH"))
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			switch {
			case errors.As(err, &exit):
				code = exit.ExitCode()
			case err != nil:
				t.Fatal(err)
			}
		} else {
			args = evalE2EArgs(pkg, cfg)
			code = runWithInput(args, nil, &stdout, &stderr)
		}
		errText := stripE2ELines(sanitizeE2EStderr(stderr.String()), cfg.StdErrStripLines)
		if code != cfg.ExitCode {
			t.Fatalf("kptbot %v: exit code %d, kpt's %d\nstderr:\n%s", args, code, cfg.ExitCode, errText)
		}
		if !strings.Contains(errText, cfg.StdErr) {
			t.Errorf("stderr:\n%s\nkpt's stderr contains:\n%s", errText, cfg.StdErr)
		}
		if cfg.StdErrRegEx != "" && !regexp.MustCompile(cfg.StdErrRegEx).MatchString(errText) {
			t.Errorf("stderr:\n%s\ndoes not match kpt's %q", errText, cfg.StdErrRegEx)
		}
		if !strings.Contains(stdout.String(), cfg.StdOut) {
			t.Errorf("stdout:\n%s\nkpt's stdout contains:\n%s", stdout.String(), cfg.StdOut)
		}
		sameDirs(t, want, pkg)
		if code != 0 {
			break // kpt's runner stops at an expected failure
		}
	}
}

// evalE2EArgs builds the command line kpt's e2e runner builds for a
// case without exec.sh; fnConfig and execPath are relative to .expected.
func evalE2EArgs(pkg string, cfg evalE2EConfig) []string {
	args := []string{"fn", "eval", pkg}
	expected := filepath.Join(pkg, ".expected")
	if cfg.Image != "" {
		args = append(args, "--image", cfg.Image)
	} else if cfg.ExecPath != "" {
		args = append(args, "--allow-exec", "--exec", filepath.Join(expected, cfg.ExecPath))
	}
	if cfg.Tag != "" {
		args = append(args, "--tag", cfg.Tag)
	}
	if cfg.FnConfig != "" {
		args = append(args, "--fn-config", filepath.Join(expected, cfg.FnConfig))
	}
	if cfg.IncludeMetaResources {
		args = append(args, "--include-meta-resources")
	}
	if len(cfg.Args) > 0 {
		args = append(args, "--")
		for k, v := range cfg.Args {
			args = append(args, k+"="+v)
		}
	}
	return args
}

// sanitizeE2EStderr writes the time of [PASS] and [FAIL] lines as 0s, as
// kpt's runner does, and kptbot's "Error: " as kpt's "error: " (a
// deliberate difference, docs/kpt-compatibility.md).
func sanitizeE2EStderr(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "Error: "); ok {
			lines[i], l = "error: "+rest, "error: "+rest
		}
		if strings.HasPrefix(l, "[PASS]") || strings.HasPrefix(l, "[FAIL]") {
			f := strings.Fields(l)
			if len(f) == 4 && f[2] == "in" {
				f[3] = "0s"
				lines[i] = strings.Join(f, " ")
			}
		}
	}
	return strings.Join(lines, "\n")
}

// stripE2ELines drops the lines kpt's runner is told to ignore.
func stripE2ELines(s string, strip []string) string {
	if len(strip) == 0 {
		return s
	}
	var kept []string
	for _, l := range strings.Split(s, "\n") {
		if !slices.Contains(strip, l) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// sameDirs requires the same files with the same bytes under both dirs.
func sameDirs(t *testing.T, want, got string) {
	t.Helper()
	w, g := readFiles(t, want), readFiles(t, got)
	for p, wb := range w {
		gb, ok := g[p]
		switch {
		case !ok:
			t.Errorf("%s: missing; kpt's has:\n%s", p, wb)
		case wb != gb:
			t.Errorf("%s: kptbot's\n%s\nkpt's\n%s", p, gb, wb)
		}
	}
	for p := range g {
		if _, ok := w[p]; !ok {
			t.Errorf("%s: kptbot wrote it, kpt's expected package has no such file", p)
		}
	}
}

func readFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(rel, ".expected"+string(filepath.Separator)) {
			return nil
		}
		b, err := os.ReadFile(p)
		m[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(fmt.Errorf("reading %s: %w", dir, err))
	}
	return m
}
