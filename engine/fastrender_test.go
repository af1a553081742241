package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFastRenderMatchesKpt renders every render golden case, and a
// generated package, with the in-process hydrator and with kpt's renderer,
// and requires the same files and the same error.
func TestFastRenderMatchesKpt(t *testing.T) {
	t.Parallel()
	cases := map[string]Tree{"generated-300": genPackage(300, 1)}
	for _, name := range caseDirs(t, "render") {
		in, err := ReadTree(filepath.Join("testdata", "render", name, "in"))
		if err != nil {
			t.Fatal(err)
		}
		cases[name] = in
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			fast, ferr := RenderTree(ctx, in, RenderOptions{})
			kpt, kerr := RenderTree(ctx, in, RenderOptions{kptOnly: true})
			if (ferr == nil) != (kerr == nil) {
				t.Fatalf("fast error %v, kpt error %v", ferr, kerr)
			}
			if ferr != nil {
				if firstLine(ferr.Error()) != firstLine(kerr.Error()) || lastLine(ferr.Error()) != lastLine(kerr.Error()) {
					t.Errorf("errors differ:\nfast: %v\nkpt:  %v", ferr, kerr)
				}
				return
			}
			for _, p := range unionPaths(fast.Tree, kpt.Tree) {
				if string(fast.Tree[p]) != string(kpt.Tree[p]) {
					t.Errorf("%s differs (-kpt +fast):\n%s", p, cmp.Diff(string(kpt.Tree[p]), string(fast.Tree[p])))
				}
			}
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
