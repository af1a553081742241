package config

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/kptbot/kptbot/internal/spelling"
	"github.com/kptbot/kptbot/internal/yamlnode"
	"io"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// Problem is one thing wrong with a kptbot.yaml.
type Problem struct {
	// File is the file name.
	File string `json:"file"`
	// Document is the 0-based index of the YAML document.
	Document int `json:"document"`
	// Line is the 1-based line in the file (0 when unknown).
	Line int `json:"line,omitempty"`
	// Field is the field path, e.g. spec.upstream.revision.
	Field string `json:"field,omitempty"`
	// Value is the offending value, when there is one.
	Value string `json:"value,omitempty"`
	// Message says what was expected.
	Message string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	fmt.Fprintf(&b, ": document %d", p.Document)
	if p.Field != "" {
		fmt.Fprintf(&b, ": %s", p.Field)
	}
	if p.Value != "" {
		fmt.Fprintf(&b, ": %q", p.Value)
	}
	fmt.Fprintf(&b, ": %s", p.Message)
	return b.String()
}

// Error is every problem found in a file.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	if len(lines) == 1 {
		return lines[0]
	}
	return fmt.Sprintf("%d problems:\n  %s", len(lines), strings.Join(lines, "\n  "))
}

// problems collects Problems for one file.
type problems struct {
	file string
	list []Problem
}

func (ps *problems) add(doc int, n *yaml.Node, field, value, format string, args ...any) {
	p := Problem{File: ps.file, Document: doc, Field: field, Value: value, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line = n.Line
	}
	ps.list = append(ps.list, p)
}

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	sort.SliceStable(ps.list, func(i, j int) bool {
		a, b := ps.list[i], ps.list[j]
		if a.Document != b.Document {
			return a.Document < b.Document
		}
		return a.Line < b.Line
	})
	return &Error{Problems: ps.list}
}

// Parse reads a kptbot.yaml named name. It returns every problem found
// (as *Error) and no File when there is any: a half-understood config must
// not drive the bot. Defaults are not applied; see Defaults.
func Parse(name string, data []byte) (*File, error) {
	ps := &problems{file: name}
	f := &File{Name: name}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for doc := 0; ; doc++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			ps.add(doc, nil, "", "", "not valid YAML: %v", err)
			break
		}
		if len(n.Content) == 0 || (n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null") {
			continue // an empty document
		}
		parseDocument(ps, f, doc, n.Content[0])
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	validate(ps, f)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return f, nil
}

// located remembers the document an object came from, for messages.
type located struct {
	doc  int
	node *yaml.Node
}

func parseDocument(ps *problems, f *File, doc int, root *yaml.Node) {
	if root.Kind != yaml.MappingNode {
		ps.add(doc, root, "", "", "expected a KRM object (a mapping with apiVersion and kind)")
		return
	}
	apiVersion, kind := scalar(root, "apiVersion"), scalar(root, "kind")
	if apiVersion != APIVersion {
		ps.add(doc, field(root, "apiVersion"), "apiVersion", apiVersion, "expected %s", APIVersion)
		return
	}
	var target any
	switch kind {
	case KindRepository:
		target = &Repository{}
	case KindPackageVariant:
		target = &PackageVariant{}
	case KindPackageVariantSet:
		target = &PackageVariantSet{}
	default:
		ps.add(doc, field(root, "kind"), "kind", kind, "expected one of %s, %s, %s", KindRepository, KindPackageVariant, KindPackageVariantSet)
		return
	}
	before := len(ps.list)
	checkFields(ps, doc, root, reflect.TypeOf(target).Elem(), "")
	if len(ps.list) > before {
		return
	}
	b, err := yaml.Marshal(root)
	if err == nil {
		err = sigsyaml.Unmarshal(b, target)
	}
	if err != nil {
		ps.add(doc, root, "", "", "cannot decode %s: %v", kind, err)
		return
	}
	at := located{doc: doc, node: root}
	switch o := target.(type) {
	case *Repository:
		if f.Repository != nil {
			ps.add(doc, root, "kind", kind, "at most one Repository per file (the first is document %d)", f.repositoryAt.doc)
			return
		}
		f.Repository, f.repositoryAt = o, at
	case *PackageVariant:
		f.Variants = append(f.Variants, *o)
		f.variantsAt = append(f.variantsAt, at)
	case *PackageVariantSet:
		f.Sets = append(f.Sets, *o)
		f.setsAt = append(f.setsAt, at)
	}
}

// scalar returns the value of a mapping's scalar field, or "".
func scalar(m *yaml.Node, key string) string {
	if v := field(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// field is the value node of key in a mapping (yamlnode.Get).
func field(m *yaml.Node, key string) *yaml.Node { return yamlnode.Get(m, key) }

// lookup follows a dotted path of mapping keys and sequence indexes
// ("spec.targets.0.template") to a node, for locating problems.
func lookup(n *yaml.Node, path string) *yaml.Node {
	cur := n
	for _, part := range strings.Split(path, ".") {
		if cur == nil {
			return n
		}
		if cur.Kind == yaml.SequenceNode {
			var i int
			if _, err := fmt.Sscanf(part, "%d", &i); err != nil || i >= len(cur.Content) {
				return cur
			}
			cur = cur.Content[i]
			continue
		}
		next := field(cur, part)
		if next == nil {
			return cur
		}
		cur = next
	}
	return cur
}

// jsonFields maps a struct type's JSON field names to their types,
// following embedded (inline) structs as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if sf.Anonymous && name == "" {
			for k, v := range jsonFields(sf.Type) {
				out[k] = v
			}
			continue
		}
		if !sf.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out[name] = sf.Type
	}
	return out
}

// checkFields reports unknown fields and values of the wrong shape under n,
// which should decode into t, with their field paths.
func checkFields(ps *problems, doc int, n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind == yaml.ScalarNode && scalarForms[t] {
			return
		}
		if n.Kind != yaml.MappingNode {
			ps.add(doc, n, path, n.Value, "expected a mapping")
			return
		}
		fields := jsonFields(t)
		known := make([]string, 0, len(fields))
		for k := range fields {
			known = append(known, k)
		}
		sort.Strings(known)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			p := join(path, key)
			ft, ok := fields[key]
			if !ok {
				ps.add(doc, n.Content[i], p, "", "unknown field; expected one of: %s%s", strings.Join(known, ", "), didYouMean(key, known))
				continue
			}
			checkFields(ps, doc, val, ft, p)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			ps.add(doc, n, path, n.Value, "expected a mapping of %s", t.Elem().Kind())
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			checkFields(ps, doc, n.Content[i+1], t.Elem(), join(path, n.Content[i].Value))
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			ps.add(doc, n, path, n.Value, "expected a list")
			return
		}
		for i, c := range n.Content {
			checkFields(ps, doc, c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			ps.add(doc, n, path, "", "expected a string")
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!bool") {
			ps.add(doc, n, path, n.Value, "expected true or false")
		}
	case reflect.Int:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			ps.add(doc, n, path, n.Value, "expected a whole number")
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// didYouMean suggests the known field closest to a misspelled one.
func didYouMean(key string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := spelling.Distance(strings.ToLower(key), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}
