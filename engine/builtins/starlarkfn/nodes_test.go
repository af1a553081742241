package starlarkfn

import (
	"math"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/qri-io/starlib/util"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// textItem is the text path itemNode stands in for: kyaml's encoding of
// the item parsed by the SDK.
func textItem(t testing.TB, m map[string]interface{}) string {
	t.Helper()
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	o, err := fn.ParseKubeObject(b)
	if err != nil {
		t.Fatal(err)
	}
	return nodeDump(borrowNode(&o))
}

// checkItemNode requires itemNode, where it applies, to build the text
// path's tree; it reports whether it applied.
func checkItemNode(t testing.TB, m map[string]interface{}) bool {
	t.Helper()
	n, ok := itemNode(m)
	if !ok {
		return false
	}
	if got, want := nodeDump(n), textItem(t, m); got != want {
		t.Fatalf("itemNode differs for %#v:\n got %s\nwant %s", m, got, want)
	}
	return true
}

// strs are strings each styled its own way by yaml.v3.
var strs = []string{
	"plain", "with space", "123", "1.5", "true", "yes", "No", "null", "~", "", "0x1F", "1_000", "2001-12-14",
	"1:20", "-1:20", "0:unset", "1:2:x", "+1:30.5", "a:b", "a: b", "a:", "a #b", "a#b", "#a", "- a", "-a", "-", "?", "?a", "? a", ":a", ": a",
	"---", "...x", "a'b", "'a", "\"a", "a\"b", `a\b`, " lead", "trail ", "[a]", "a,b", "{", "&a", "*a", "!a", "|", ">",
	"%a", "@a", "`a", "<<", "a\nb", "a\n", "a\n\n", "a\nb\n", "line one\n  indented\n\nlast", "\nlead", " lead\nx", "trail \nx", "x\ntrail ", "a\n\n\n", "a\r\nb", "a\n---\nb", "a\n# c\n", "tab\t", "héllo", ".inf", "-.inf", ".nan", "+1", "-0", "0o17", "017", "1e3",
	"app.kubernetes.io/name", "registry.example.com/shop/app:1.4.2", "http://x/y?z=1&w=2", strings.Repeat("k", 129),
}

func TestItemNodeMatchesText(t *testing.T) {
	applied := 0
	for _, s := range strs {
		for _, m := range []map[string]interface{}{
			{"apiVersion": "v1", "kind": "X", "v": s},
			{s: "key", "b": 1},
			{"a": s, "b": 1, "c": []interface{}{s, "x", []interface{}{s, s}}, "d": map[string]interface{}{"e": s, "f": "g"}},
			{"l": []interface{}{s, map[string]interface{}{s: s, "x": []interface{}{s}}}, "m": map[string]interface{}{"n": map[string]interface{}{s: []interface{}{}}}},
		} {
			if checkItemNode(t, m) {
				applied++
			}
		}
	}
	for _, v := range []interface{}{nil, true, false, 0, -5, math.MaxInt64, 1.0, 1.5, 1e6, 1e21, 1e-7, -0.0, math.Inf(1), math.Inf(-1), math.NaN(),
		map[string]interface{}{}, []interface{}{}, []interface{}{[]interface{}{1, []interface{}{2}}, map[string]interface{}{}, []interface{}{}}} {
		if checkItemNode(t, map[string]interface{}{"a": v, "b": []interface{}{v, map[string]interface{}{"c": v, "d": v}}, "e": map[string]interface{}{"f": v}}) {
			applied++
		}
	}
	// key order: yaml.v3's natural order of digits within keys
	keys := map[string]interface{}{}
	for _, k := range []string{"a1", "a10", "a2", "a01", "a001", "A", "_a", "a_b", "aB", "a-b", "a.b", "a/b", "b", "10", "9", "09", "1a", "a9b", "a10b", "x0", "x00", "x01"} {
		keys[k] = k
	}
	if checkItemNode(t, keys) {
		applied++
	}
	if applied < 150 {
		t.Fatalf("itemNode applied to only %d items", applied)
	}
}

// TestItemNodeCovers: the resources of the conversion cases take the
// direct path after a round through Starlark values.
func TestItemNodeCovers(t *testing.T) {
	for _, i := range []int{0, 2} {
		rl := resourceList(t, conversionCases[i])
		v, ok := directResourceList(rl)
		if !ok {
			t.Fatalf("case %d declined", i)
		}
		out, err := util.Unmarshal(v)
		if err != nil {
			t.Fatal(err)
		}
		item := out.(map[string]interface{})["items"].([]interface{})[0].(map[string]interface{})
		if !checkItemNode(t, item) {
			t.Fatalf("case %d: itemNode declined", i)
		}
	}
}

func FuzzItemNode(f *testing.F) {
	for _, s := range strs {
		f.Add(s, s, int64(1), 1.5)
	}
	f.Fuzz(func(t *testing.T, k, v string, i int64, x float64) {
		checkItemNode(t, map[string]interface{}{
			k: v, "i": int(i), "f": x,
			"l": []interface{}{v, k, []interface{}{v}, map[string]interface{}{k: v, v: []interface{}{x}}},
			"m": map[string]interface{}{v: map[string]interface{}{k: i}, k + "1": nil},
		})
	})
}
