package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
}

// evalE2ESkips names why kptbot does not match a case of kpt's, so the
// differences stay visible.
var evalE2ESkips = map[string]string{}

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
	root := filepath.Join("testdata", "kpt-e2e-eval")
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
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			if why, ok := evalE2ESkips[name]; ok {
				t.Skip(why)
			}
			runEvalE2ECase(t, root, name)
		})
	}
}

func runEvalE2ECase(t *testing.T, root, name string) {
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
		args := evalE2EArgs(pkg, cfg)
		var stdout, stderr bytes.Buffer
		code := runWithInput(args, nil, &stdout, &stderr)
		errText := sanitizeE2EStderr(stderr.String())
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
