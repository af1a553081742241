package render

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/golden"
)

// renderCase is testdata/render/<case>/case.yaml (optional).
type renderCase struct {
	AllowExec bool `json:"allowExec"`
	// SavedOnFailure: the render fails but saves partial output (want/).
	SavedOnFailure bool `json:"savedOnFailure"`
}

func TestRenderGolden(t *testing.T) {
	for _, name := range golden.CaseDirs(t, "render") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			caseDir := filepath.Join("testdata", "render", name)
			var c renderCase
			if b, err := os.ReadFile(filepath.Join(caseDir, "case.yaml")); err == nil {
				if err := yaml.UnmarshalStrict(b, &c); err != nil {
					t.Fatalf("case.yaml: %v", err)
				}
			}
			in, err := kptpkg.ReadTree(filepath.Join(caseDir, "in"))
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "pkg")
			if err := in.Write(dir); err != nil {
				t.Fatal(err)
			}
			res, err := Render(context.Background(), dir, RenderOptions{Runtimes: Runtimes{AllowExec: c.AllowExec}})
			if err != nil {
				golden.CheckFile(t, filepath.Join(caseDir, "error.txt"), []byte(strings.ReplaceAll(err.Error(), dir, "PKG")+"\n"))
				after, rerr := kptpkg.ReadTree(dir)
				if rerr != nil {
					t.Fatal(rerr)
				}
				if c.SavedOnFailure {
					golden.CheckTree(t, filepath.Join(caseDir, "want"), after, func(b []byte) []byte { return b })
					return
				}
				added, removed, modified := in.Changes(after)
				if len(added)+len(removed) > 0 || (len(modified) > 0 && !(len(modified) == 1 && modified[0] == kptpkg.KptfileName)) {
					t.Errorf("failed render changed the package: added %v removed %v modified %v", added, removed, modified)
				}
				var re *RenderError
				if errors.As(err, &re) {
					// The Rendered condition and the render status kpt records.
					golden.CheckFile(t, filepath.Join(caseDir, "want", kptpkg.KptfileName), after[kptpkg.KptfileName])
				}
				return
			}
			if golden.Exists(filepath.Join(caseDir, "error.txt")) && !*golden.Update {
				t.Fatalf("Render succeeded, want the error in error.txt")
			}
			got, err := kptpkg.ReadTree(dir)
			if err != nil {
				t.Fatal(err)
			}
			golden.CheckTree(t, filepath.Join(caseDir, "want"), got, func(b []byte) []byte { return b })
			if res.Results == nil {
				t.Error("no results")
			}
		})
	}
}
