package resourcelist

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/comments"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestCopyCommentsMatchesKyaml: copyComments does what kyaml's
// comments.CopyComments does, on every golden input's resources against
// their outputs and against comment-less re-encodings of themselves.
func TestCopyCommentsMatchesKyaml(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "*", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pairs := 0
	for _, in := range files {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		rl, err := Decode(data, nil)
		if err != nil {
			continue
		}
		items := rl.Items
		for i, from := range items {
			for _, to := range []*yaml.RNode{items[(i+1)%len(items)], stripComments(from)} {
				want, got := to.Copy(), to.Copy()
				werr := comments.CopyComments(from, want)
				gerr := copyComments(from, got)
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%s item %d: kyaml error %v, kptbot error %v", in, i, werr, gerr)
				}
				if diff := cmp.Diff(want.MustString(), got.MustString()); diff != "" {
					t.Fatalf("%s item %d: (-kyaml +kptbot):\n%s", in, i, diff)
				}
				pairs++
			}
		}
	}
	if pairs < 50 {
		t.Fatalf("only %d pairs compared", pairs)
	}
}

func stripComments(n *yaml.RNode) *yaml.RNode {
	c := n.Copy()
	var strip func(*yaml.Node)
	strip = func(y *yaml.Node) {
		y.HeadComment, y.LineComment, y.FootComment = "", "", ""
		for _, k := range y.Content {
			strip(k)
		}
	}
	strip(c.YNode())
	return c
}
