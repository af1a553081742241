package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/internal/gitfixture"
)

// starlarkPrintPackage is a package whose starlark step prints two lines,
// then (with fail) stops the render with fail().
func starlarkPrintPackage(t *testing.T, fail bool) string {
	t.Helper()
	script := `print("namespace is " + "prod")\n      print("done")\n`
	if fail {
		script += `      fail("refused")\n`
	}
	pkg := filepath.Join(t.TempDir(), "app")
	gitfixture.WriteFiles(t, pkg, map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: ghcr.io/kptdev/krm-functions-catalog/starlark:v0.5\n      configPath: star.yaml\n",
		"star.yaml": "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: star\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nsource: |\n  " +
			strings.ReplaceAll(strings.ReplaceAll(script, `\n`, "\n"), "      ", "  "),
		"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: prod\n",
	})
	return pkg
}

// TestStarlarkPrintIsStderr: what a starlark script prints is the
// function's stderr, as the catalog's container writes it: kpt shows it
// after the function's results, records it in the results file and in the
// Kptfile's renderStatus, and never mixes it into the output.
func TestStarlarkPrintIsStderr(t *testing.T) {
	t.Parallel()
	const printed = "namespace is prod\ndone\n"

	t.Run("eval", func(t *testing.T) {
		t.Parallel()
		pkg := starlarkPrintPackage(t, false)
		results := t.TempDir()
		out, stderr, code := kptbot(t, "fn", "eval", pkg, "--image", "ghcr.io/kptdev/krm-functions-catalog/starlark:v0.5", "--fn-config", filepath.Join(pkg, "star.yaml"), "--results-dir", results, "-o", "stdout")
		if code != 0 {
			t.Fatalf("eval: %s", stderr)
		}
		if strings.Contains(out, "namespace is prod") {
			t.Errorf("printed lines on stdout:\n%s", out)
		}
		if !strings.Contains(stderr, " Stderr: namespace is prod, done\n") {
			t.Errorf("stderr lacks the printed lines:\n%s", stderr)
		}
		b, err := os.ReadFile(filepath.Join(results, "results.yaml"))
		if err != nil || !strings.Contains(string(b), "    stderr: |-\n      namespace is prod\n      done\n") {
			t.Errorf("results.yaml lacks stderr (%v):\n%s", err, b)
		}
	})

	t.Run("render", func(t *testing.T) {
		t.Parallel()
		pkg := starlarkPrintPackage(t, false)
		results := t.TempDir()
		_, stderr, code := kptbot(t, "fn", "render", pkg, "--results-dir", results)
		if code != 0 {
			t.Fatalf("render: %s", stderr)
		}
		if !strings.Contains(stderr, "namespace is prod") {
			t.Errorf("render output lacks the printed lines:\n%s", stderr)
		}
		b, err := os.ReadFile(filepath.Join(results, "results.yaml"))
		if err != nil || !strings.Contains(string(b), "stderr: |-\n      namespace is prod\n      done\n") {
			t.Errorf("results.yaml lacks stderr (%v):\n%s", err, b)
		}
		kf, _ := os.ReadFile(filepath.Join(pkg, "Kptfile"))
		if !strings.Contains(string(kf), "stderr: |-\n          "+strings.ReplaceAll(strings.TrimSuffix(printed, "\n"), "\n", "\n          ")+"\n") {
			t.Errorf("Kptfile renderStatus lacks the step's stderr:\n%s", kf)
		}
	})

	t.Run("render failure", func(t *testing.T) {
		t.Parallel()
		pkg := starlarkPrintPackage(t, true)
		_, stderr, code := kptbot(t, "fn", "render", pkg)
		if code == 0 {
			t.Fatalf("render of a failing script succeeded: %s", stderr)
		}
		kf, _ := os.ReadFile(filepath.Join(pkg, "Kptfile"))
		if !strings.Contains(string(kf), "namespace is prod") || !strings.Contains(string(kf), "failed to evaluate function: error: function failure") {
			t.Errorf("Kptfile renderStatus lacks the printed lines and the failure:\n%s", kf)
		}
	})
}
