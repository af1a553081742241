package resourcelist

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func goldenInputs(t *testing.T) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "*", "*", "input.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	out := map[string][]byte{"comments": []byte(trickyComments)}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
	}
	return out
}

// trickyComments has comments in the places yaml.v3 attaches differently:
// foot comments at the end of an item, comments between items, blank lines.
const trickyComments = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a # line
    # head of labels
    labels:
      x: y
      # foot of labels

  data:
    k: |
      one

      two
    j: v
    # foot of data
  # foot of item
- apiVersion: v1
  # head of kind
  kind: ConfigMap

  metadata:
    name: b
  data: {}
  # trailing
  # trailing 2

- apiVersion: v1
  kind: List
  items:
  - a # one
  # between
  - b
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: c
`

// wholeEncode is the reference encoding: the whole ResourceList as one
// yaml.v3 document, which is what kpt's kio.ByteWriter produces.
func wholeEncode(t *testing.T, rl *List) string {
	t.Helper()
	root := mapping("apiVersion", scalar(rl.APIVersion), "kind", scalar(rl.Kind))
	items := &yaml.Node{Kind: yaml.SequenceNode}
	for _, it := range rl.Items {
		items.Content = append(items.Content, it.YNode())
	}
	if len(items.Content) == 0 {
		items.Style = yaml.FlowStyle
	}
	root.Content = append(root.Content, scalar("items"), items)
	if rl.FunctionConfig != nil {
		root.Content = append(root.Content, scalar("functionConfig"), rl.FunctionConfig.YNode())
	}
	var b bytes.Buffer
	if err := encodeDoc(&b, root); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSplitDecodeMatchesWholeDecode checks that parsing items one chunk at a
// time gives the same trees (comments included) as parsing the document whole.
func TestSplitDecodeMatchesWholeDecode(t *testing.T) {
	t.Parallel()
	for name, in := range goldenInputs(t) {
		split, ok := decodeSplit(in, nil)
		if !ok {
			t.Errorf("%s: fast path declined a kpt-style ResourceList", name)
			continue
		}
		whole, err := decodeWhole(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(wholeEncode(t, whole), wholeEncode(t, split)); diff != "" {
			t.Errorf("%s: split decode differs (-whole +split):\n%s", name, diff)
		}
	}
}

// TestEncodeMatchesWholeDocument checks that encoding items one at a time,
// and passing untouched items through verbatim, both give exactly the bytes
// of encoding the ResourceList as one document.
func TestEncodeMatchesWholeDocument(t *testing.T) {
	t.Parallel()
	for name, in := range goldenInputs(t) {
		whole, err := decodeWhole(in)
		if err != nil {
			t.Fatal(err)
		}
		canonical := wholeEncode(t, whole)
		for _, passThrough := range []bool{true, false} {
			rl, err := Decode([]byte(canonical), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !passThrough {
				rl.originals = nil
			}
			var out bytes.Buffer
			if err := rl.Encode(&out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(canonical, out.String()); diff != "" {
				t.Errorf("%s (passThrough=%v): output differs from whole-document encoding (-want +got):\n%s", name, passThrough, diff)
			}
		}
	}
}

func TestSplitItemsLayouts(t *testing.T) {
	t.Parallel()
	const cfg = "functionConfig:\n  kind: ConfigMap\n  metadata:\n    name: c\n"
	tests := []struct {
		name, in string
		items    int
		ok       bool
	}{
		{"compact", "kind: ResourceList\nitems:\n- kind: A\n  x: |\n    a\n\n    b\n- kind: B\n" + cfg, 2, true},
		{"wide", "kind: ResourceList\nitems:\n  - kind: A\n    l:\n      - 1\n  - kind: B\n" + cfg, 2, true},
		{"items last", "kind: ResourceList\n" + cfg + "items:\n- kind: A\n- kind: B\n", 2, true},
		{"flow items", "kind: ResourceList\nitems: [{kind: A}]\n", 0, false},
		{"column-0 comment", "kind: ResourceList\nitems:\n# about A\n- kind: A\n", 0, false},
		{"no items", "kind: ResourceList\n" + cfg, 0, false},
		{"json", `{"kind": "ResourceList", "items": [{"kind": "A"}]}`, 0, false},
	}
	for _, tt := range tests {
		rl, ok := decodeSplit([]byte(tt.in), nil)
		if ok != tt.ok {
			t.Errorf("%s: fast path ok = %v, want %v", tt.name, ok, tt.ok)
			continue
		}
		if ok && len(rl.Items) != tt.items {
			t.Errorf("%s: %d items, want %d", tt.name, len(rl.Items), tt.items)
		}
		// the general entry point must accept every layout
		all, err := Decode([]byte(tt.in), nil)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		whole, _ := decodeWhole([]byte(tt.in))
		if len(all.Items) != len(whole.Items) {
			t.Errorf("%s: %d items, whole parse has %d", tt.name, len(all.Items), len(whole.Items))
		}
	}
	rl, ok := decodeSplit([]byte(tests[0].in), nil)
	if !ok || rl.Items[0].Field("x").Value.YNode().Value != "a\n\nb\n" {
		t.Errorf("block scalar with an empty line was not kept intact")
	}
}

// TestBytePreservation checks, for every golden case, that each output item
// whose data the function did not change is byte for byte the input item,
// comments, quoting and field order included.
func TestBytePreservation(t *testing.T) {
	t.Parallel()
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "*", "output.yaml"))
	checked := 0
	for _, outPath := range paths {
		in, err := os.ReadFile(filepath.Join(filepath.Dir(outPath), "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.ReadFile(outPath)
		if err != nil {
			t.Fatal(err)
		}
		_, inChunks, ok1 := splitItems(in)
		_, outChunks, ok2 := splitItems(out)
		if !ok1 || !ok2 {
			t.Fatalf("%s: cannot split items", outPath)
		}
		inputs := map[string][]byte{}
		for _, c := range inChunks {
			n, _ := parseChunk(c)
			inputs[identKey(n)] = c
		}
		for _, c := range outChunks {
			n, _ := parseChunk(c)
			ic, ok := inputs[identKey(n)]
			if !ok {
				continue
			}
			orig, _ := parseChunk(ic)
			if !sameData(orig, n) || !sameComments(orig, n) {
				continue
			}
			checked++
			if !bytes.Equal(ic, c) {
				t.Errorf("%s: unchanged item %s was rewritten:\n--- input\n%s--- output\n%s", outPath, identKey(n), ic, c)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d unchanged items checked; golden data too thin", checked)
	}
}

// sameComments reports whether two trees with the same data carry the same
// comments in the same places.
func sameComments(a, b *yaml.Node) bool {
	if a.HeadComment != b.HeadComment || a.LineComment != b.LineComment || a.FootComment != b.FootComment || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameComments(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

func identKey(n *yaml.Node) string {
	r := yaml.NewRNode(n)
	return strings.Join([]string{r.GetApiVersion(), r.GetKind(), r.GetNamespace(), r.GetName()}, "/")
}
