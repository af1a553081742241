package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/render"
	"github.com/kptbot/kptbot/internal/golden"
)

// TestRenderMatchesKptE2E renders kpt's own render end-to-end cases
// (testdata/kpt-e2e: e2e/testdata/fn-render of kpt v1.0.0-beta.67,
// copied as they are) in place, as `kpt fn render` does, and requires the
// package kpt's expected diff (.expected/diff.patch) describes, byte for
// byte: the resources and the root Kptfile, with its Rendered condition
// and status.renderStatus. kpt ran the catalog functions as containers;
// kptbot runs its built-ins.
func TestRenderMatchesKptE2E(t *testing.T) {
	t.Parallel()
	testExpectedDiffs(t, "kpt-e2e", true)
}

// TestRenderMatchesCatalogExamples renders examples of the catalog
// functions kptbot has built in (testdata/catalog-examples: examples/ of
// github.com/kptdev/krm-functions-catalog, copied as they are) and
// requires the resources their expected diffs describe. The catalog's
// diffs leave the Kptfile out.
func TestRenderMatchesCatalogExamples(t *testing.T) {
	t.Parallel()
	testExpectedDiffs(t, "catalog-examples", false)
}

// testExpectedDiffs renders each case of testdata/<kind> in place and
// compares the package with the case's .expected/diff.patch applied;
// withKptfile says whether the diff covers the root Kptfile.
func testExpectedDiffs(t *testing.T, kind string, withKptfile bool) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed to apply the expected diffs")
	}
	for _, name := range golden.CaseDirs(t, kind) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			caseDir := filepath.Join("testdata", kind, name)
			var cfg struct {
				ExitCode int `json:"exitCode"`
			}
			if b, err := os.ReadFile(filepath.Join(caseDir, ".expected", "config.yaml")); err == nil {
				if err := yaml.Unmarshal(b, &cfg); err != nil {
					t.Fatal(err)
				}
			}
			in, err := kptpkg.ReadTree(caseDir)
			if err != nil {
				t.Fatal(err)
			}
			want := kptpkg.Tree{}
			for p, b := range in {
				if !strings.HasPrefix(p, ".expected/") {
					want[p] = b
				}
			}
			pkg := filepath.Join(t.TempDir(), name)
			if err := in.Write(pkg); err != nil {
				t.Fatal(err)
			}
			wantDir := filepath.Join(t.TempDir(), name)
			if err := want.Write(wantDir); err != nil {
				t.Fatal(err)
			}
			patch, err := filepath.Abs(filepath.Join(caseDir, ".expected", "diff.patch"))
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(patch); err == nil && fi.Size() > 0 {
				cmd := exec.Command("git", "apply", "--whitespace=nowarn", patch)
				cmd.Dir = wantDir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("applying kpt's expected diff: %v: %s", err, out)
				}
			}
			_, rerr := render.Render(context.Background(), pkg, render.RenderOptions{})
			if (rerr != nil) != (cfg.ExitCode != 0) {
				t.Fatalf("render error %v, kpt's exit code %d", rerr, cfg.ExitCode)
			}
			got, err := kptpkg.ReadTree(pkg)
			if err != nil {
				t.Fatal(err)
			}
			wantTree, err := kptpkg.ReadTree(wantDir)
			if err != nil {
				t.Fatal(err)
			}
			for p := range got {
				if strings.HasPrefix(p, ".expected/") || (!withKptfile && p == kptpkg.KptfileName) {
					delete(got, p)
					delete(wantTree, p)
				}
			}
			golden.SameTrees(t, kind+" expected vs kptbot", wantTree, got)
		})
	}
}
