package pkgmerge

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/internal/mergewalk"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge3"
	"sigs.k8s.io/kustomize/kyaml/yaml/walk"
)

// randomTriple builds origin, updated and local versions of a resource
// whose scalars and non-associative lists vary in value, quoting style,
// tag, comments and nullness (each side keeps the origin's field half of
// the time): the inputs on which comparing nodes and comparing their
// encodings could disagree.
func randomTriple(r *rand.Rand) [3]string {
	scalars := []string{"1", `"1"`, "'1'", "!!str 1", "!!int 1", "!!float 1", "2", "a", `"a"`, "'a'", "a # note", "a # other", `1 # {"type": "string"}`, `"1" # {"type": "integer"}`, "null", "~", `""`, "true", `"true"`, "yes", "On", "NULL", "x1.y-z", "1.0", "|\n    a\n", ">-\n    a\n", "&x a"}
	lists := []string{"[a, b]", "['a', b]", "[b, a]", "\n    - a\n    - b", "\n    - a # c\n    - b", "[]", "null", "\n    - a", "\n    - \"a\"\n    - b", "[!!str a, b]",
		"\n    - name: a\n      v: 1\n    - name: b\n      v: 2", "\n    - name: b\n      v: 3",
		`# {"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}` + "\n    - name: a\n      v: 4"}
	var docs [3]strings.Builder
	for i := range docs {
		docs[i].WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
	}
	field := func(key string, values []string) {
		var v [3]string
		v[0] = values[r.Intn(len(values))]
		for i := 1; i < 3; i++ {
			v[i] = v[0]
			if r.Intn(2) == 0 {
				v[i] = values[r.Intn(len(values))]
			}
		}
		for i := range docs {
			if r.Intn(8) > 0 {
				fmt.Fprintf(&docs[i], "  %s: %s\n", key, v[i])
			}
		}
	}
	for i := range docs {
		docs[i].WriteString("data:\n")
	}
	for k := 0; k < 4; k++ {
		field(fmt.Sprintf("k%d", k), scalars)
	}
	for i := range docs {
		docs[i].WriteString("spec:\n")
	}
	for k := 0; k < 3; k++ {
		field(fmt.Sprintf("l%d", k), lists)
	}
	return [3]string{docs[0].String(), docs[1].String(), docs[2].String()}
}

// TestMerge3VisitorMatchesKyaml walks random triples with kyaml's walker
// and merge3.Visitor, and with the engine's (mergewalk, merge3Visitor),
// and requires the same result.
func TestMerge3VisitorMatchesKyaml(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 3000; i++ {
		docs := randomTriple(r)
		walkWith := func(v walk.Visitor, fork bool) string {
			var src []*yaml.RNode
			for _, d := range []string{docs[2], docs[0], docs[1]} { // dest, origin, updated
				src = append(src, yaml.MustParse(d))
			}
			var out *yaml.RNode
			var err error
			if fork {
				out, err = mergewalk.Walker{Visitor: v, VisitKeysAsScalars: true, Sources: src}.Walk()
			} else {
				out, err = walk.Walker{Visitor: v, VisitKeysAsScalars: true, Sources: src}.Walk()
			}
			if err != nil {
				return "error: " + err.Error()
			}
			if out == nil {
				return "<nil>"
			}
			return out.MustString()
		}
		want, got := walkWith(merge3.Visitor{}, false), walkWith(merge3Visitor{}, true)
		if want != got {
			t.Fatalf("case %d differs\norigin:\n%s\nupdated:\n%s\nlocal:\n%s\nkyaml:\n%s\nkptbot:\n%s", i, docs[0], docs[1], docs[2], want, got)
		}
	}
}
