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
	pairs := 0
	for _, g := range goldenLists(t) {
		in, rl := g.path, g.list
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

// checkCommentsShortcut: where copyComments skips the walk, the walk
// would have left to as it was, without an error.
func checkCommentsShortcut(t testing.TB, from, to string) bool {
	t.Helper()
	f, err1 := yaml.Parse(from)
	g, err2 := yaml.Parse(to)
	if err1 != nil || err2 != nil || f.YNode() == nil || g.YNode() == nil {
		return false
	}
	if anyNode(f.YNode(), commentOrAlias) || anyNode(g.YNode(), foldedOrAlias) || !sameShape(f.YNode(), g.YNode()) {
		return false
	}
	before := dumpNode(g.YNode())
	if err := walkComments(f, g); err != nil {
		t.Fatalf("the walk fails (%v) where copyComments skips it\nfrom:\n%s\nto:\n%s", err, from, to)
	}
	if after := dumpNode(g.YNode()); after != before {
		t.Fatalf("the walk changes to where copyComments skips it:\n%s\nto:\n%s", before, after)
	}
	return true
}

var commentsShortcutCases = [][2]string{
	{"a: 1\nb: [x, y]\n", "b: [y]\na: 2\nc: {d: e}\n"},
	{"spec:\n  containers:\n  - name: a\n    image: x\n", "spec:\n  containers:\n  - name: a\n    image: y\n  - name: b\n"},
	{"l:\n- a\n- b\n", "l:\n- b\n- c: d\n"},
	{"a: yes\nb: 'on'\n", "a: yes\nb: on\nc: 1_000\n"},
	{"a: {x: 1}\n", "a: [1]\n"},
	{"a: 1\n", "a: 1\na: 2\n"},
	{"- a\n", "a: b\n"},
}

func TestCopyCommentsShortcut(t *testing.T) {
	t.Parallel()
	n := 0
	for _, c := range commentsShortcutCases {
		if checkCommentsShortcut(t, c[0], c[1]) {
			n++
		}
		checkCommentsShortcut(t, c[1], c[0])
	}
	for _, g := range goldenLists(t) {
		rl := g.list
		for i, it := range rl.Items {
			from := stripComments(it).MustString()
			if checkCommentsShortcut(t, from, rl.Items[(i+1)%len(rl.Items)].MustString()) {
				n++
			}
		}
	}
	if n < 20 {
		t.Fatalf("the shortcut applied to only %d pairs", n)
	}
}

func FuzzCopyCommentsShortcut(f *testing.F) {
	for _, c := range commentsShortcutCases {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, from, to string) {
		checkCommentsShortcut(t, from, to)
	})
}

// goldenLists are the ResourceLists of the built-ins' golden files (inputs
// and outputs) that decode: real resources, with the comments, styles and
// orders the functions meet, for the differential tests against kyaml.
func goldenLists(t *testing.T) []goldenList {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "*", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []goldenList
	for _, in := range files {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		if rl, err := Decode(data, nil); err == nil {
			out = append(out, goldenList{in, rl})
		}
	}
	return out
}

// goldenList is one golden file's ResourceList and the file's path.
type goldenList struct {
	path string
	list *List
}
