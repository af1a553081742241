package render

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/internal/enginetest"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/golden"
)

// TestFastRenderMatchesKpt renders every render golden case, and a
// generated package, with the in-process hydrator and with kpt's renderer,
// and requires the same files and the same error.
func TestFastRenderMatchesKpt(t *testing.T) {
	t.Parallel()
	for name, in := range renderCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			fast, ferr := RenderTree(ctx, in, RenderOptions{})
			kpt, kerr := RenderTree(ctx, in, RenderOptions{KptOnly: true})
			if (ferr == nil) != (kerr == nil) {
				t.Fatalf("fast error %v, kpt error %v", ferr, kerr)
			}
			if ferr != nil {
				if firstLine(ferr.Error()) != firstLine(kerr.Error()) || lastLine(ferr.Error()) != lastLine(kerr.Error()) {
					t.Errorf("errors differ:\nfast: %v\nkpt:  %v", ferr, kerr)
				}
				return
			}
			golden.SameTrees(t, "kptbot vs kpt", kpt.Tree, fast.Tree)
			if len(fast.Results.Items) != len(kpt.Results.Items) {
				t.Errorf("fast ran %d functions, kpt %d", len(fast.Results.Items), len(kpt.Results.Items))
			}
		})
	}
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// renderCases are the render golden cases' inputs and a generated
// 300-resource package.
func renderCases(t *testing.T) map[string]kptpkg.Tree {
	t.Helper()
	cases := map[string]kptpkg.Tree{"generated-300": enginetest.GenPackage(300, 1)}
	for _, name := range golden.CaseDirs(t, "render") {
		in, err := kptpkg.ReadTree(filepath.Join("testdata", "render", name, "in"))
		if err != nil {
			t.Fatal(err)
		}
		cases[name] = in
	}
	return cases
}
