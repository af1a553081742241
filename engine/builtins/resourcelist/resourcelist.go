// Package resourcelist is the KRM function wire format the built-ins run
// on: a ResourceList decoded so that untouched items are written back byte
// for byte, catalog SDK processors run on its items in place, and the
// presentation (comments, field order) of items a function rebuilt restored.
package resourcelist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// List is the decoded wire ResourceList a built-in works on. Items are
// plain kyaml nodes so every implementation (kyaml filters, the fn SDK, the
// kustomize filters) can share them without another parse.
type List struct {
	// APIVersion and Kind are the ResourceList's own.
	APIVersion string
	Kind       string
	// Items are the resources, in order.
	Items []*yaml.RNode
	// FunctionConfig is nil when the input had none (kpt render without config).
	FunctionConfig *yaml.RNode
	// Results are the results of this run only; kpt collects them per function.
	Results fn.Results
	// Ctx bounds the run of a function that may not end by itself (starlark).
	Ctx context.Context
	// MaxSteps bounds a starlark script; 0 for the default.
	MaxSteps uint64
	// Stderr receives what the function writes to its standard error (a
	// starlark script's print); nil discards it.
	Stderr io.Writer

	// originals remembers each input item's wire bytes and fingerprint, so an
	// item the function did not touch is written back byte for byte instead of
	// being re-encoded (cheaper, and keeps its formatting exactly).
	originals map[*yaml.Node]original
	seed      maphash.Seed

	// raw holds input items left unparsed because the function cannot
	// change them (see SkipFunc); slots then gives the output order,
	// an index into items, or -1-i for raw[i].
	raw   [][]byte
	slots []int
}

type original struct {
	chunk []byte
	sum   uint64
}

// SkipFunc, given the functionConfig, returns a test that is true for an
// item's wire bytes only when the function certainly leaves that item alone.
type SkipFunc func(config *yaml.RNode) func(chunk []byte) bool

// Decode parses a wire ResourceList. The common kpt layout (block
// style, one "items:" key at column 0) is split textually into one chunk per
// item, so that items skip says are irrelevant need not be parsed at all and
// untouched items can be written back verbatim; anything unusual falls back
// to one full parse.
func Decode(data []byte, skip SkipFunc) (*List, error) {
	if bytes.Contains(data, []byte("\r\n")) {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	}
	if rl, ok := decodeSplit(data, skip); ok {
		return rl, nil
	}
	return decodeWhole(data)
}

func decodeWhole(data []byte) (*List, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty input, expected a ResourceList")
		}
		return nil, fmt.Errorf("parsing ResourceList: %w", err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	rl, err := headerFrom(root)
	if err != nil {
		return nil, err
	}
	if items := yaml.NewRNode(root).Field("items"); items != nil && items.Value.YNode().Kind == yaml.SequenceNode {
		for _, n := range items.Value.YNode().Content {
			rl.Items = append(rl.Items, yaml.NewRNode(n))
		}
	}
	return rl, nil
}

// headerFrom validates the ResourceList mapping and takes everything but the items from it.
func headerFrom(root *yaml.Node) (*List, error) {
	if root.Kind != yaml.MappingNode {
		return nil, errors.New("input is not a ResourceList mapping")
	}
	rn := yaml.NewRNode(root)
	rl := &List{APIVersion: kio.ResourceListAPIVersion, Kind: kio.ResourceListKind, seed: maphash.MakeSeed()}
	if f := rn.Field("kind"); f != nil {
		rl.Kind = f.Value.YNode().Value
	}
	if rl.Kind != kio.ResourceListKind {
		return nil, fmt.Errorf("input was of unexpected kind %q; expected ResourceList", rl.Kind)
	}
	if f := rn.Field("apiVersion"); f != nil && f.Value.YNode().Value != "" {
		rl.APIVersion = f.Value.YNode().Value
	}
	if f := rn.Field("functionConfig"); f != nil && f.Value.YNode().Kind == yaml.MappingNode {
		rl.FunctionConfig = f.Value
	}
	return rl, nil
}

// decodeSplit is the fast path of Decode; ok is false when the
// input is not in the layout it understands.
func decodeSplit(data []byte, skip SkipFunc) (*List, bool) {
	rest, chunks, ok := splitItems(data)
	if !ok {
		return nil, false
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(rest)).Decode(&doc); err != nil {
		return nil, false
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, false
	}
	rl, err := headerFrom(doc.Content[0])
	if err != nil || yaml.NewRNode(doc.Content[0]).Field("items") != nil {
		return nil, false
	}
	var skips func([]byte) bool
	if skip != nil {
		skips = skip(rl.FunctionConfig)
	}
	rl.Items = make([]*yaml.RNode, 0, len(chunks))
	rl.originals = make(map[*yaml.Node]original, len(chunks))
	if skips != nil {
		rl.slots = make([]int, 0, len(chunks))
	}
	var h maphash.Hash
	h.SetSeed(rl.seed)
	for _, c := range chunks {
		if skips != nil && skips(c) {
			rl.raw = append(rl.raw, c)
			rl.slots = append(rl.slots, -len(rl.raw))
			continue
		}
		n, ok := parseChunk(c)
		if !ok {
			return nil, false
		}
		if rl.slots != nil {
			rl.slots = append(rl.slots, len(rl.Items))
		}
		rl.Items = append(rl.Items, yaml.NewRNode(n))
		rl.originals[n] = original{chunk: c, sum: rl.fingerprint(&h, n)}
	}
	return rl, true
}

// splitItems cuts the block sequence under a column-0 "items:" key into one
// chunk per item, each chunk a standalone one-element YAML sequence in compact
// style. rest is the input without the items key.
func splitItems(data []byte) (rest []byte, chunks [][]byte, ok bool) {
	start := -1
	for off := 0; off < len(data); {
		end := lineEnd(data, off)
		if string(bytes.TrimRight(data[off:end], " ")) == "items:" {
			start = off
			break
		}
		off = next(data, end)
	}
	if start < 0 {
		return nil, nil, false
	}
	off := next(data, lineEnd(data, start))
	indent := -1
	var cur []byte // current chunk being built (only when indent > 0)
	curStart := -1
	blockEnd := len(data)
	flush := func(at int) {
		if curStart < 0 {
			return
		}
		if indent == 0 {
			chunks = append(chunks, data[curStart:at])
		} else {
			chunks = append(chunks, cur)
			cur = nil
		}
		curStart = -1
	}
	for off < len(data) {
		end := lineEnd(data, off)
		line := data[off:end]
		if len(line) == 0 {
			if indent > 0 && curStart >= 0 {
				cur = append(cur, '\n')
			}
			off = next(data, end)
			continue
		}
		sp := 0
		for sp < len(line) && line[sp] == ' ' {
			sp++
		}
		if sp == len(line) {
			// whitespace-only line: treat as empty
			if indent > 0 && curStart >= 0 {
				cur = append(cur, '\n')
			}
			off = next(data, end)
			continue
		}
		if indent < 0 {
			if line[sp] != '-' {
				// items is null or not a block sequence
				return nil, nil, false
			}
			indent = sp
		}
		body := line[sp:]
		switch {
		case sp == indent && len(body) >= 2 && body[0] == '-' && body[1] == ' ':
			flush(off)
			curStart = off
			if indent > 0 {
				cur = append(cur, line[indent:]...)
				cur = append(cur, '\n')
			}
		case sp > indent && curStart >= 0:
			if indent > 0 {
				cur = append(cur, line[indent:]...)
				cur = append(cur, '\n')
			}
		case sp == 0 && body[0] != '#' && body[0] != '-' && body[0] != '.' && body[0] != '\t':
			// next top-level key
			blockEnd = off
			off = len(data)
			continue
		default:
			return nil, nil, false
		}
		off = next(data, end)
	}
	flush(blockEnd)
	if indent < 0 {
		return nil, nil, false
	}
	rest = make([]byte, 0, start+len(data)-blockEnd)
	rest = append(rest, data[:start]...)
	rest = append(rest, data[blockEnd:]...)
	return rest, chunks, true
}

func lineEnd(data []byte, off int) int {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return off + i
	}
	return len(data)
}

func next(data []byte, end int) int {
	if end < len(data) {
		return end + 1
	}
	return end
}

func parseChunk(chunk []byte) (*yaml.Node, bool) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(chunk)).Decode(&doc); err != nil {
		return nil, false
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || hasComments(&doc) {
		return nil, false
	}
	seq := doc.Content[0]
	if seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 || hasComments(seq) || seq.Anchor != "" {
		return nil, false
	}
	return seq.Content[0], true
}

func hasComments(n *yaml.Node) bool {
	return n.HeadComment != "" || n.LineComment != "" || n.FootComment != ""
}

// fingerprint hashes everything about a tree that affects its encoding.
func (rl *List) fingerprint(h *maphash.Hash, n *yaml.Node) uint64 {
	h.Reset()
	hashNode(h, n)
	return h.Sum64()
}

func hashNode(h *maphash.Hash, n *yaml.Node) {
	_ = h.WriteByte(byte(n.Kind))
	_ = h.WriteByte(byte(n.Style))
	_ = h.WriteByte(byte(len(n.Content)))
	_ = h.WriteByte(0)
	for _, s := range [...]string{n.Tag, n.Value, n.Anchor, n.HeadComment, n.LineComment, n.FootComment} {
		_, _ = h.WriteString(s)
		_ = h.WriteByte(0)
	}
	for _, c := range n.Content {
		hashNode(h, c)
	}
	if n.Alias != nil {
		_, _ = h.WriteString(n.Alias.Anchor)
	}
	_ = h.WriteByte(1)
}

// Encode writes the ResourceList in the layout kpt's kio.ByteWriter uses:
// apiVersion, kind, items, functionConfig, results.
func (rl *List) Encode(w io.Writer) error {
	var out bytes.Buffer
	head := mapping("apiVersion", scalar(rl.APIVersion), "kind", scalar(rl.Kind))
	if err := encodeDoc(&out, head); err != nil {
		return err
	}
	if len(rl.Items) == 0 && len(rl.raw) == 0 {
		out.WriteString("items: []\n")
	} else {
		out.WriteString("items:\n")
		parts, err := rl.encodeItems()
		if err != nil {
			return err
		}
		for _, p := range parts {
			out.Write(p)
		}
	}
	var tail []*yaml.Node
	if rl.FunctionConfig != nil {
		tail = append(tail, scalar("functionConfig"), rl.FunctionConfig.YNode())
	}
	if len(rl.Results) > 0 {
		tail = append(tail, scalar("results"), resultsNode(rl.Results))
	}
	if len(tail) > 0 {
		if err := encodeDoc(&out, &yaml.Node{Kind: yaml.MappingNode, Content: tail}); err != nil {
			return err
		}
	}
	_, err := w.Write(out.Bytes())
	return err
}

// encodeItems encodes each item as a one-element sequence document, which
// yields exactly the bytes the item has inside the items list. Encoding
// items separately also keeps yaml.v3's per-document event buffer small.
func (rl *List) encodeItems() ([][]byte, error) {
	var h maphash.Hash
	h.SetSeed(rl.seed)
	encodeOne := func(n *yaml.Node) ([]byte, error) {
		if o, ok := rl.originals[n]; ok && rl.fingerprint(&h, n) == o.sum {
			return o.chunk, nil
		}
		var b bytes.Buffer
		err := encodeDoc(&b, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{n}})
		return b.Bytes(), err
	}
	if rl.slots == nil {
		parts := make([][]byte, len(rl.Items))
		for i, it := range rl.Items {
			var err error
			if parts[i], err = encodeOne(it.YNode()); err != nil {
				return nil, err
			}
		}
		return parts, nil
	}
	parts := make([][]byte, len(rl.slots))
	for i, s := range rl.slots {
		if s < 0 {
			parts[i] = rl.raw[-1-s]
			continue
		}
		var err error
		if parts[i], err = encodeOne(rl.Items[s].YNode()); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

func encodeDoc(w io.Writer, n *yaml.Node) error {
	e := yaml.NewEncoder(w)
	if err := e.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{n}}); err != nil {
		return fmt.Errorf("encoding ResourceList: %w", err)
	}
	return e.Close()
}

func scalar(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: v}
}

func mapping(kv ...interface{}) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i < len(kv); i += 2 {
		m.Content = append(m.Content, scalar(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return m
}

// resultsNode builds the results list by hand: reflection-based marshalling
// of thousands of results would cost more than the function itself.
func resultsNode(results fn.Results) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v, Tag: yaml.NodeTagString} }
	for _, r := range results {
		m := &yaml.Node{Kind: yaml.MappingNode}
		add := func(k string, v *yaml.Node) { m.Content = append(m.Content, scalar(k), v) }
		add("message", str(r.Message))
		if r.Severity != "" {
			add("severity", str(string(r.Severity)))
		}
		if ref := r.ResourceRef; ref != nil {
			rm := &yaml.Node{Kind: yaml.MappingNode}
			for _, kv := range [][2]string{{"apiVersion", ref.APIVersion}, {"kind", ref.Kind}, {"name", ref.Name}, {"namespace", ref.Namespace}} {
				if kv[1] != "" {
					rm.Content = append(rm.Content, scalar(kv[0]), str(kv[1]))
				}
			}
			add("resourceRef", rm)
		}
		if f := r.Field; f != nil && f.Path != "" {
			fm := mapping("path", str(f.Path))
			if f.CurrentValue != nil {
				fm.Content = append(fm.Content, scalar("currentValue"), str(fmt.Sprint(f.CurrentValue)))
			}
			if f.ProposedValue != nil {
				fm.Content = append(fm.Content, scalar("proposedValue"), str(fmt.Sprint(f.ProposedValue)))
			}
			add("field", fm)
		}
		if f := r.File; f != nil && f.Path != "" {
			fm := mapping("path", str(f.Path))
			if f.Index != 0 {
				fm.Content = append(fm.Content, scalar("index"), &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprint(f.Index), Tag: yaml.NodeTagInt})
			}
			add("file", fm)
		}
		if len(r.Tags) > 0 {
			tm := &yaml.Node{Kind: yaml.MappingNode}
			for _, k := range yaml.SortedMapKeys(r.Tags) {
				tm.Content = append(tm.Content, scalar(k), str(r.Tags[k]))
			}
			add("tags", tm)
		}
		seq.Content = append(seq.Content, m)
	}
	return seq
}

// Partial reports whether some input items were left unparsed (see
// SkipFunc): a function may then edit items but not add, drop or reorder
// them.
func (rl *List) Partial() bool { return rl.slots != nil }
