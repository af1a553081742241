// Package searchreplace is the catalog's search-replace function: fields
// found by path, value, regular expression or file, and optionally given a
// new value or a comment.
package searchreplace

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// search-replace matchers ("by-") and mutators ("put-"), the only keys its
// ConfigMap may hold.
const (
	byValue      = "by-value"
	byValueRegex = "by-value-regex"
	byPath       = "by-path"
	byFilePath   = "by-file-path"
	putValue     = "put-value"
	putComment   = "put-comment"
)

// Replacer is one search-replace configuration; New makes it.
type Replacer struct {
	byValue, byValueRegex, byPath, byFilePath, putValue, putComment string

	regex   *regexp.Regexp
	pattern []string // by-path split on "."
	mutate  bool

	results fn.Results
	count   int
	file    string // file of the resource being visited
}

// apply is search-replace on items. Matchers are ANDed; a field
// matches by path, by value or regex, or both. As in the catalog, the regex
// matches anywhere in the value and its capture groups feed ${N} in the
// put- patterns; an absolute by-path with only put-value creates the field
// in every resource.
func (sr *Replacer) apply(items []*yaml.RNode) error {
	for _, it := range items {
		file, _, _ := kioutil.GetFileAnnotations(it)
		if sr.byFilePath != "" && !globMatch(sr.byFilePath, file) {
			continue
		}
		sr.file = file
		if sr.putsByPath() {
			if err := sr.putByPath(it); err != nil {
				return err
			}
			continue
		}
		if err := sr.walk(it.YNode(), nil, ""); err != nil {
			return err
		}
	}
	return nil
}

// Apply runs search-replace on items and returns its per-field results
// and the number of fields it matched. Each call counts on its own, so
// pieces of one package may be handled concurrently.
func (sr *Replacer) Apply(items []*yaml.RNode) (fn.Results, int, error) {
	run := *sr
	run.results, run.count = nil, 0
	err := run.apply(items)
	return run.results, run.count, err
}

// Mutates reports whether the configuration changes fields (put-value or
// put-comment) rather than only matching them.
func (sr *Replacer) Mutates() bool { return sr.mutate }

// New reads the data of search-replace's ConfigMap.
func New(data map[string]string) (*Replacer, error) {
	var err error
	sr := &Replacer{}
	for key, v := range data {
		switch key {
		case byValue:
			sr.byValue = v
		case byValueRegex:
			sr.byValueRegex = v
		case byPath:
			sr.byPath = v
		case byFilePath:
			sr.byFilePath = v
		case putValue:
			sr.putValue = v
		case putComment:
			sr.putComment = v
		default:
			return nil, fmt.Errorf("invalid matcher %q, must be one of %q", key,
				[]string{byValue, byFilePath, byValueRegex, byPath, putValue, putComment})
		}
	}
	if sr.byValue != "" && sr.byValueRegex != "" {
		return nil, fmt.Errorf("only one of [%q, %q] can be provided", byValue, byValueRegex)
	}
	if sr.byValueRegex != "" {
		if sr.regex, err = regexp.Compile(sr.byValueRegex); err != nil {
			return nil, err
		}
	}
	if sr.byPath != "" {
		sr.pattern = strings.Split(sr.byPath, ".")
	}
	sr.mutate = sr.putValue != "" || sr.putComment != ""
	return sr, nil
}

// putsByPath: an absolute path and a value, nothing to search for.
func (sr *Replacer) putsByPath() bool {
	if sr.putValue == "" || sr.byValue != "" || sr.byValueRegex != "" || sr.byPath == "" || strings.Contains(sr.byPath, "[") {
		return false
	}
	for _, p := range sr.pattern {
		if p == "" || strings.Contains(p, "*") {
			return false
		}
	}
	return true
}

func (sr *Replacer) putByPath(it *yaml.RNode) error {
	parent, err := it.Pipe(yaml.LookupCreate(yaml.MappingNode, sr.pattern[:len(sr.pattern)-1]...))
	if err != nil {
		return fmt.Errorf("%s %s: %s: %w", it.GetKind(), it.GetName(), sr.byPath, err)
	}
	if parent.YNode().Kind != yaml.MappingNode {
		return fmt.Errorf("%s %s: %s: parent is not a map", it.GetKind(), it.GetName(), sr.byPath)
	}
	last := sr.pattern[len(sr.pattern)-1]
	if f := parent.Field(last); f != nil && f.Value.YNode().Kind == yaml.ScalarNode {
		f.Value.YNode().Value = sr.putValue
		f.Value.YNode().Tag = yaml.NodeTagEmpty
	} else {
		v := &yaml.Node{Kind: yaml.ScalarNode, Value: sr.putValue}
		if f != nil {
			*f.Value.YNode() = *v
		} else {
			parent.YNode().Content = append(parent.YNode().Content, &yaml.Node{Kind: yaml.ScalarNode, Value: last}, v)
		}
	}
	sr.record(sr.byPath, sr.putValue)
	sr.count++
	return nil
}

// record reports one field as the catalog does: no severity, the value as
// YAML (see scalarText).
func (sr *Replacer) record(fieldPath, value string) {
	msg := fmt.Sprintf("Matched field value %q", value)
	if sr.mutate {
		msg = fmt.Sprintf("Mutated field value to %q", value)
	}
	r := &fn.Result{Message: msg, Field: &fn.Field{Path: fieldPath}}
	if sr.file != "" {
		r.File = &fn.File{Path: sr.file}
	}
	sr.results = append(sr.results, r)
}

// walk visits every field; elems is the field path so far, one element per
// map key, with list indices attached to their key as in "containers[0]".
func (sr *Replacer) walk(n *yaml.Node, elems []string, key string) error {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if isKptAnnotation(elems, k.Value) {
				// kpt's own bookkeeping (file path, index, id): never a match
				continue
			}
			child := append(elems, k.Value)
			if sr.putComment != "" && v.Kind == yaml.SequenceNode && len(v.Content) > 0 && sr.pathMatch(child) {
				if err := sr.commentSequence(k, v, child); err != nil {
					return err
				}
			}
			if err := sr.walk(v, child, k.Value); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		if len(elems) == 0 {
			return nil
		}
		base := elems[len(elems)-1]
		for i, c := range n.Content {
			child := append(elems[:len(elems)-1:len(elems)-1], base+"["+strconv.Itoa(i)+"]")
			if err := sr.walk(c, child, key); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		return sr.visitScalar(n, elems)
	}
	return nil
}

func isKptAnnotation(elems []string, key string) bool {
	if len(elems) != 2 || elems[0] != "metadata" || elems[1] != "annotations" {
		return false
	}
	return resourcelist.IsBookkeeping(key)
}

func (sr *Replacer) visitScalar(n *yaml.Node, elems []string) error {
	pathOK := sr.pathMatch(elems)
	valueOK := (sr.byValue != "" && sr.byValue == n.Value) || (sr.regex != nil && sr.regex.MatchString(n.Value))
	if !((valueOK && pathOK) || (valueOK && sr.byPath == "") || (pathOK && sr.byValue == "" && sr.byValueRegex == "")) {
		return nil
	}
	if sr.putComment != "" {
		c, err := sr.resolve(n.Value, sr.putComment)
		if err != nil {
			return err
		}
		n.LineComment = c
	}
	if sr.putValue != "" {
		v, err := sr.resolve(n.Value, sr.putValue)
		if err != nil {
			return err
		}
		n.Value, n.Tag = v, yaml.NodeTagEmpty
	}
	sr.count++
	if sr.file == "" {
		// the catalog counts the field but reports only fields of files
		return nil
	}
	sr.record(strings.Join(elems, "."), scalarText(n))
	return nil
}

// scalarText is a node as the catalog prints it in a result: its YAML
// text (quoted when YAML would need quotes, a comment put on it included).
func scalarText(n *yaml.Node) string {
	s, err := yaml.String(n)
	if err != nil {
		return n.Value
	}
	return strings.TrimSpace(s)
}

// commentSequence puts the comment on the key of a matched list, where a
// setter comment for a list lives.
func (sr *Replacer) commentSequence(k, v *yaml.Node, elems []string) error {
	k.LineComment = sr.putComment
	// the catalog reports the list as YAML in flow style, then folds it
	v.Style = yaml.FlowStyle
	text := scalarText(v)
	v.Style = yaml.FoldedStyle
	sr.record(strings.Join(elems, ".")+" # "+sr.putComment, text)
	sr.count++
	return nil
}

// resolve fills ${N} in a put- pattern from the by-value-regex capture groups.
func (sr *Replacer) resolve(value, pattern string) (string, error) {
	if sr.regex == nil {
		return pattern, nil
	}
	res := pattern
	for i, g := range sr.regex.FindStringSubmatch(value) {
		if i > 0 {
			res = strings.ReplaceAll(res, "${"+strconv.Itoa(i)+"}", g)
		}
	}
	if hasCaptureRef(res) {
		return "", errors.New("unable to resolve capture groups")
	}
	return res, nil
}

// pathMatch matches a field path against by-path, where "*" is one element,
// "**" any number of elements, and "name[*]" any index of a list.
func (sr *Replacer) pathMatch(elems []string) bool {
	if sr.pattern == nil || len(elems) == 0 {
		return false
	}
	return matchElems(elems, sr.pattern)
}

func matchElems(elems, pattern []string) bool {
	if len(pattern) == 0 {
		return len(elems) == 0
	}
	if pattern[0] == "**" {
		for i := 0; i <= len(elems); i++ {
			if matchElems(elems[i:], pattern[1:]) {
				return true
			}
		}
		return false
	}
	if len(elems) == 0 || !matchElem(elems[0], pattern[0]) {
		return false
	}
	return matchElems(elems[1:], pattern[1:])
}

func matchElem(elem, pattern string) bool {
	if pattern == "*" || elem == pattern {
		return true
	}
	ei := strings.Index(elem, "[")
	pi := strings.Index(pattern, "[")
	if ei < 0 || pi < 0 {
		return false
	}
	if pattern[:pi] != "*" && pattern[:pi] != elem[:ei] {
		return false
	}
	return pattern[pi:] == "[*]" || pattern[pi:] == elem[ei:]
}

// globMatch matches a slash-separated file path against a pattern where
// "**" spans directories, "{a,b}" gives alternatives, and the rest is
// path.Match syntax.
func globMatch(pattern, file string) bool {
	for _, p := range expandBraces(pattern) {
		if matchSegments(strings.Split(p, "/"), strings.Split(file, "/")) {
			return true
		}
	}
	return false
}

func matchSegments(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegments(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	p := pat[0]
	if strings.Contains(p, "**") {
		// a mid-segment ** behaves like *
		p = strings.ReplaceAll(p, "**", "*")
	}
	if ok, err := path.Match(p, segs[0]); err != nil || !ok {
		return false
	}
	return matchSegments(pat[1:], segs[1:])
}

func expandBraces(p string) []string {
	open := strings.Index(p, "{")
	if open < 0 {
		return []string{p}
	}
	depth := 0
	for i := open; i < len(p); i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				var out []string
				for _, alt := range splitTopLevel(p[open+1 : i]) {
					out = append(out, expandBraces(p[:open]+alt+p[i+1:])...)
				}
				return out
			}
		}
	}
	return []string{p}
}

func splitTopLevel(s string) []string {
	var out []string
	depth, last := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[last:i])
				last = i + 1
			}
		}
	}
	return append(out, s[last:])
}

// hasCaptureRef reports whether s still holds a ${N} reference.
func hasCaptureRef(s string) bool {
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return false
		}
		s = s[i+2:]
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > 0 && j < len(s) && s[j] == '}' {
			return true
		}
	}
}
