package starlarkfn

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	catalog "github.com/kptdev/krm-functions-catalog/functions/go/starlark/starlark"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/qri-io/starlib/util"
	"go.starlark.net/starlark"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// conversionCases are resources in the forms a script may meet: every
// scalar type and style yaml.v3 knows, quoted look-alikes of numbers and
// booleans, comments, empty and null values, anchors, merge keys,
// non-string and repeated keys.
var conversionCases = []string{
	`apiVersion: v1
kind: ConfigMap
metadata:
  name: plain # a comment
  annotations:
    a: "123"
    b: '0x1F'
    c: "true"
    d: 'yes'
    e: yes
    f: no
    g: on
    h: "null"
    i: ""
    j: "~"
    k: "1.5"
    l: "2001-12-14"
data:
  int: 3
  neg: -7
  big: 9223372036854775807
  huge: 99999999999999999999
  octal: 0o17
  oldoctal: 017
  hex: 0x1F
  under: 1_000
  float: 1.5
  exp: 1e3
  one: 1.0
  inf: .inf
  ninf: -.Inf
  nan: .nan
  t: true
  f2: False
  n1: null
  n2: ~
  n3:
`,
	`apiVersion: v1
kind: ConfigMap
metadata:
  name: strings
data:
  literal: |
    line one
    line two
  strip: |-
    no newline
  keep: |+
    kept

  indented: |2
      leading spaces
  trailing: "trailing space "
  leading: " leading"
  tabs: "a\tb"
  crlf: "a\r\nb"
  unicode: "héllo wörld ✓"
  escapes: "\x01\u0007"
  colon: "a: b"
  hash: "a #b"
  dash: "- x"
  star: "*x"
  long: "` + strings.Repeat("long words ", 20) + `"
  spaced: two  spaces
  image: registry.example.com/shop/app:1.4.2
  url: http://example.com/a?b=c&d=e
`,
	`apiVersion: v1
kind: List
metadata:
  name: collections
  labels: {}
  annotations: {a: b}
items: []
flow: [1, "two", {three: 3}]
nested:
- - a
  - b
- []
- {}
- k: v
  l: [x]
-
- null
emptykey:
  "": empty
`,
	`apiVersion: v1
kind: Anchors
metadata:
  name: anchors
base: &base
  a: 1
copy: *base
merged:
  <<: *base
  b: 2
`,
	`apiVersion: v1
kind: Keys
metadata:
  name: keys
map:
  1: one
  true: yes
  null: none
  1.5: float
`,
	`apiVersion: v1
kind: Tags
metadata:
  name: tags
s: !!str 123
i: !!int "5"
f: !!float 1
b: !!bool true
n: !!null ""
bin: !!binary aGVsbG8=
custom: !foo bar
ts: !!timestamp 2001-12-14
m: !!map {a: 1}
q: !!str
bigger: 18446744073709551615
folded: >
  folded text
  continues here
date: 2001-12-14
stamp: 2001-12-14t21:59:43.10-05:00
`,
	`apiVersion: v1
kind: Dup
metadata:
  name: dup
a: 1
a: 2
`,
	`apiVersion: v1
kind: Quoted
metadata:
  name: quoted
  "quoted key": 1
  '123': numeric-looking key
  "<<": not a merge
`,
}

// canon is a Starlark value as text with dict keys sorted: the catalog's
// dicts come in Go's random map order, which no script may rely on.
func canon(v starlark.Value) string {
	switch x := v.(type) {
	case *starlark.Dict:
		var parts []string
		for _, k := range x.Keys() {
			e, _, _ := x.Get(k)
			parts = append(parts, canon(k)+": "+canon(e))
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	case *starlark.List:
		var parts []string
		for i := 0; i < x.Len(); i++ {
			parts = append(parts, canon(x.Index(i)))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return v.Type() + ":" + v.String()
}

// nodeDump renders everything about a node tree that anything downstream
// may read, positions included.
func nodeDump(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%s%d %q %q style=%d anchor=%q line=%d col=%d hc=%q lc=%q fc=%q\n", strings.Repeat(" ", depth), n.Kind, n.Tag, n.Value, n.Style, n.Anchor, n.Line, n.Column, n.HeadComment, n.LineComment, n.FootComment)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

func objectsDump(objs fn.KubeObjects) string {
	var b strings.Builder
	for _, o := range objs {
		b.WriteString(o.String())
		b.WriteString("---\n")
		b.WriteString(nodeDump(borrowNode(&o)))
	}
	return b.String()
}

func resourceList(t testing.TB, docs ...string) *fn.ResourceList {
	t.Helper()
	rl := &fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject()}
	for _, d := range docs {
		o, err := fn.ParseKubeObject([]byte(d))
		if err != nil {
			t.Fatalf("parsing %q: %v", d, err)
		}
		rl.Items = append(rl.Items, o)
	}
	return rl
}

// checkInput requires the direct conversion, where it applies, to give the
// catalog's value; it returns that value (nil when neither converts).
func checkInput(t testing.TB, rl *fn.ResourceList) starlark.Value {
	t.Helper()
	want, werr := catalogResourceList(rl)
	got, ok := directResourceList(rl)
	if !ok {
		return want
	}
	if werr != nil {
		t.Fatalf("the catalog fails (%v) where the direct conversion gives %s", werr, canon(got))
	}
	if canon(got) != canon(want) {
		t.Fatalf("direct conversion differs:\n got %s\nwant %s", canon(got), canon(want))
	}
	return got
}

// checkOutput requires the direct reading of a script's result, where it
// applies, to give the catalog's KubeObjects node for node.
func checkOutput(t testing.TB, value starlark.Value) {
	t.Helper()
	out, err := util.Unmarshal(value)
	if err != nil {
		return
	}
	want, werr := catalogItems(out)
	got, ok := directItems(out)
	if !ok {
		return
	}
	if werr != nil {
		t.Fatalf("the catalog fails (%v) where the direct reading succeeds", werr)
	}
	if g, w := objectsDump(got), objectsDump(want); g != w {
		t.Fatalf("direct reading differs:\n got %s\nwant %s", g, w)
	}
}

func TestDirectConversionMatchesCatalog(t *testing.T) {
	for i, c := range conversionCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			rl := resourceList(t, c)
			if v := checkInput(t, rl); v != nil {
				checkOutput(t, v)
			}
			for _, variant := range nodeVariants {
				rl := resourceList(t, c)
				for j := range rl.Items {
					walkNodes(borrowNode(&rl.Items[j]), variant)
				}
				if v := checkInput(t, rl); v != nil {
					checkOutput(t, v)
				}
			}
		})
	}
}

// TestDirectConversionCovers guards against a direct path that silently
// declines everything: the common forms must take it.
func TestDirectConversionCovers(t *testing.T) {
	for _, i := range []int{0, 1, 2} {
		rl := resourceList(t, conversionCases[i])
		v, ok := directResourceList(rl)
		if !ok {
			t.Fatalf("case %d: the direct conversion declined", i)
		}
		out, err := util.Unmarshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := directItems(out); !ok {
			t.Fatalf("case %d: the direct reading declined", i)
		}
	}
}

// nodeVariants rewrite parsed nodes into forms functions build by hand
// (no tag, a non-string tag with quotes, a string tag without), which
// text never yields.
var nodeVariants = []func(n *yaml.Node){
	func(n *yaml.Node) { n.Tag = "" },
	func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			n.Style = yaml.DoubleQuotedStyle
		}
	},
	func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			n.Style = 0
		}
	},
	func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			n.Tag = yaml.NodeTagString
		}
	},
	func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && n.Tag == yaml.NodeTagString {
			n.Tag = yaml.NodeTagInt
		}
	},
	func(n *yaml.Node) { n.Style = yaml.LiteralStyle },
	func(n *yaml.Node) {
		if n.Tag != "" {
			n.Tag = "tag:yaml.org,2002:" + strings.TrimPrefix(n.Tag, "!!")
		}
	},
}

func walkNodes(n *yaml.Node, f func(*yaml.Node)) {
	f(n)
	for _, c := range n.Content {
		walkNodes(c, f)
	}
}

// scriptResults are values scripts leave behind, read back both ways.
var scriptResults = []string{
	`r = ctx.resource_list; r["items"][0]["metadata"]["labels"] = {"tier": "web", "n": 1, "f": 1.0, "g": 2.5, "b": True, "z": None}`,
	`r = ctx.resource_list; r["items"].append({"apiVersion": "v1", "kind": "X", "metadata": {"name": "new\nline"}, "s": "123", "t": "yes", "e": "", "l": [], "m": {}, "nested": [[1], {"a": [None]}]})`,
	`r = ctx.resource_list; r["items"][0]["data"] = {1: "int key", "k": "v"}`,
	`r = ctx.resource_list; r["items"].append("not a mapping")`,
	`r = ctx.resource_list; r["items"] = None`,
	`r = ctx.resource_list; r["functionConfig"]["x"] = set([1])`,
	`r = ctx.resource_list; r["items"][0]["big"] = 9223372036854775807`,
	`r = ctx.resource_list; r["items"][0]["k"] = {"a b": " lead", "trail ": "x ", "#": "a #b", "<<": "m", "unicode": "✓ ok", "long": "x" * 200}`,
	`r = ctx.resource_list; r["items"][0]["t"] = (1, "two")`,
	`r = ctx.resource_list; r["extra"] = {"k": [1, 2]}`,
}

func TestDirectReadingMatchesCatalog(t *testing.T) {
	for i, script := range scriptResults {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			rl := resourceList(t, conversionCases[0], conversionCases[1])
			v, err := resourceListValue(rl)
			if err != nil {
				t.Fatal(err)
			}
			if err := runStarlarkScript(t.Context(), "test", script, v, 1e6, nil); err != nil {
				t.Fatal(err)
			}
			checkOutput(t, v)
		})
	}
}

// TestTransformMatchesCatalog runs whole transforms both ways: the
// direct conversions against the catalog's code path as it was.
func TestTransformMatchesCatalog(t *testing.T) {
	for i, c := range conversionCases {
		for j, script := range scriptResults {
			rl := resourceList(t, c)
			base := resourceList(t, c)
			sr := &catalog.StarlarkRun{Source: script}
			sr.Name = "test"
			err := transformStarlark(t.Context(), sr, rl, 1e6, nil)
			werr := catalogTransform(t, base, script)
			// Which of several errors comes first follows the catalog's
			// random map order, so only failing alike is required.
			if (err == nil) != (werr == nil) {
				t.Fatalf("case %d script %d: error %v, the catalog's %v", i, j, err, werr)
			}
			if err != nil {
				continue
			}
			if g, w := objectsDump(rl.Items), objectsDump(base.Items); g != w {
				t.Fatalf("case %d script %d:\n got %s\nwant %s", i, j, g, w)
			}
		}
	}
}

// catalogTransform is transformStarlark as it was before the direct
// conversions, the catalog's code path.
func catalogTransform(t testing.TB, rl *fn.ResourceList, script string) error {
	value, err := catalogResourceList(rl)
	if err != nil {
		return err
	}
	if err := runStarlarkScript(t.Context(), "test", script, value, 1e6, nil); err != nil {
		return err
	}
	out, err := util.Unmarshal(value)
	if err != nil {
		return err
	}
	objs, err := catalogItems(out)
	if err != nil {
		return err
	}
	rl.Items = objs
	return nil
}

func FuzzDirectConversion(f *testing.F) {
	for _, c := range conversionCases {
		f.Add(c, uint8(0))
	}
	f.Add("a: 1\n", uint8(3))
	f.Fuzz(func(t *testing.T, doc string, variant uint8) {
		o, err := fn.ParseKubeObject([]byte(doc))
		if err != nil {
			return
		}
		rl := &fn.ResourceList{Items: fn.KubeObjects{o}, FunctionConfig: fn.NewEmptyKubeObject()}
		if v := int(variant); v > 0 && v <= len(nodeVariants) {
			walkNodes(borrowNode(&rl.Items[0]), nodeVariants[v-1])
		}
		if v := checkInput(t, rl); v != nil {
			checkOutput(t, v)
		}
	})
}
