package resourcelist

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/order"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// dumpNode renders every field of a tree, positions included.
func dumpNode(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%s%d %q %q style=%d line=%d col=%d hc=%q lc=%q fc=%q\n", strings.Repeat(" ", depth), n.Kind, n.Tag, n.Value, n.Style, n.Line, n.Column, n.HeadComment, n.LineComment, n.FootComment)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// checkSyncOrder runs kyaml's SyncOrder and syncOrder on two identical
// instances of a pair (parsed from text, optionally reconciled by
// adoptUnchanged first, as Preserving does) and requires the same trees.
func checkSyncOrder(t testing.TB, from, to string, adopt bool) {
	t.Helper()
	parse := func(s string) *yaml.Node {
		n, err := yaml.Parse(s)
		if err != nil {
			return nil
		}
		return n.YNode()
	}
	wf, wt, gf, gt := parse(from), parse(to), parse(from), parse(to)
	if wf == nil || wt == nil {
		return
	}
	if adopt {
		adoptUnchanged(wf, wt)
		adoptUnchanged(gf, gt)
	}
	werr := order.SyncOrder(yaml.NewRNode(wf), yaml.NewRNode(wt))
	gerr := syncOrder(gf, gt)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("kyaml error %v, ours %v\nfrom:\n%s\nto:\n%s", werr, gerr, from, to)
	}
	if w, g := dumpNode(wt), dumpNode(gt); w != g {
		t.Fatalf("to differs:\nkyaml:\n%s\nours:\n%s\nfrom:\n%s\nto:\n%s", w, g, from, to)
	}
	if w, g := dumpNode(wf), dumpNode(gf); w != g {
		t.Fatalf("from differs:\nkyaml:\n%s\nours:\n%s", w, g)
	}
}

var syncOrderCases = [][2]string{
	{"a: 1\nb: 2\nc: 3\n", "c: 3\nb: 2\na: 1\nd: 4\n"},
	{"a: {x: 1, y: 2}\nb: [1, 2]\n", "b: [2, 1]\na: {y: 2, x: 1, z: 3}\n"},
	{"l:\n- a: 1\n  # head\n  b: 2\n- c: 3\n", "l:\n- b: 2\n  a: 1\n- c: 4\n  d: 5\n- e: 6\n"},
	{"l:\n- # item\n  a: 1\n", "l:\n- a: 1\n"},
	{"a: 1\na: 2\n", "a: 2\nb: 1\n"},
	{"a: 1\nb: 2\n", "b: 2\nb: 3\na: 1\n"},
	{"a: [1, 2]\n", "a: {x: 1}\n"},
	{"a: {x: 1}\n", "a: [1]\n"},
	{"a: {x: 1}\n", "a: scalar\n"},
	{"a: !!null\nb: {}\nc: []\n", "c: [1]\nb: {x: 1}\na: {y: 2}\n"},
	{"a: {x: 1}\n", "a: !!null\n"},
	{"- a: 1\n  b: 2\n- 3\n", "- b: 2\n  a: 1\n- 3\n- 4\n"},
	{"spec:\n  containers:\n  - name: a\n    image: x\n    ports:\n    - containerPort: 80\n      name: http\n", "spec:\n  containers:\n  - ports:\n    - name: http\n      containerPort: 81\n    image: y\n    name: a\n"},
}

func TestSyncOrderMatchesKyaml(t *testing.T) {
	t.Parallel()
	for i, c := range syncOrderCases {
		for _, adopt := range []bool{false, true} {
			t.Run(fmt.Sprint(i, adopt), func(t *testing.T) {
				checkSyncOrder(t, c[0], c[1], adopt)
				checkSyncOrder(t, c[1], c[0], adopt)
			})
		}
	}
	// every golden input's resources against each other and themselves
	pairs := 0
	for _, g := range goldenLists(t) {
		rl := g.list
		for i, from := range rl.Items {
			to := rl.Items[(i+1)%len(rl.Items)]
			for _, adopt := range []bool{false, true} {
				checkSyncOrder(t, from.MustString(), to.MustString(), adopt)
				checkSyncOrder(t, from.MustString(), from.MustString(), adopt)
				pairs++
			}
		}
	}
	if pairs < 50 {
		t.Fatalf("only %d pairs compared", pairs)
	}
}

func FuzzSyncOrder(f *testing.F) {
	for _, c := range syncOrderCases {
		f.Add(c[0], c[1], false)
		f.Add(c[0], c[1], true)
	}
	f.Fuzz(func(t *testing.T, from, to string, adopt bool) {
		checkSyncOrder(t, from, to, adopt)
	})
}
