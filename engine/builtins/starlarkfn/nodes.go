package starlarkfn

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// itemNode builds the node tree fn.ParseKubeObject makes of kyaml's
// encoding of an item (yaml.Marshal: indent 2, compact sequences), without
// the text: the same kinds, tags, styles, values, key order and the line
// and column each node would be parsed at (decode errors quote them). It
// covers the usual forms: strings of printable ASCII (plain, or quoted for
// the reasons yaml.v3's encoder and emitter have, or literal blocks),
// keys that are one-line such strings. For anything else ok is false and the
// item takes the text path. TestDirectReadingMatchesCatalog and the fuzz
// tests hold the two to the same nodes.
func itemNode(item map[string]interface{}) (*yaml.Node, bool) {
	if len(item) == 0 {
		return nil, false
	}
	b := nodeBuilder{line: 1, ok: true}
	n := b.mapping(item, 1)
	return n, b.ok
}

type nodeBuilder struct {
	line int
	ok   bool
}

// mapping lays out a non-empty block mapping whose first key is on the
// current line at column col.
func (b *nodeBuilder) mapping(m map[string]interface{}, col int) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Line: b.line, Column: col}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	n.Content = make([]*yaml.Node, 0, 2*len(keys))
	for _, k := range keys {
		// longer keys are written as complex keys ("? ")
		if len(k) > 128 || k == "<<" {
			b.ok = false
			return nil
		}
		kn, width := stringNode(k)
		if kn == nil {
			b.ok = false
			return nil
		}
		kn.Line, kn.Column = b.line, col
		vn := b.value(m[k], b.line, col+width+2, col, col+2)
		if !b.ok {
			return nil
		}
		n.Content = append(n.Content, kn, vn)
	}
	return n
}

// sequence lays out a non-empty block sequence whose first dash is on
// the current line at column col.
func (b *nodeBuilder) sequence(l []interface{}, col int) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Line: b.line, Column: col}
	n.Content = make([]*yaml.Node, 0, len(l))
	for _, e := range l {
		vn := b.value(e, b.line, col+2, col+2, col+2)
		if !b.ok {
			return nil
		}
		n.Content = append(n.Content, vn)
	}
	return n
}

// value lays out v written at (line, col) after a key or a dash: a scalar
// or an empty collection there; a mapping below, at mapCol, or in a
// sequence on the same line; a sequence below at seqCol (compact) or in a
// sequence on the same line.
func (b *nodeBuilder) value(v interface{}, line, col, seqCol, mapCol int) *yaml.Node {
	inSeq := seqCol == col
	switch x := v.(type) {
	case map[string]interface{}:
		if len(x) == 0 {
			b.line++
			return &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Style: yaml.FlowStyle, Line: line, Column: col}
		}
		if !inSeq {
			b.line++
		}
		return b.mapping(x, mapCol)
	case []interface{}:
		if len(x) == 0 {
			b.line++
			return &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Style: yaml.FlowStyle, Line: line, Column: col}
		}
		if !inSeq {
			b.line++
		}
		return b.sequence(x, seqCol)
	}
	if s, isStr := v.(string); isStr && strings.Contains(s, "\n") {
		n, lines := literalNode(s)
		if n == nil {
			b.ok = false
			return nil
		}
		n.Line, n.Column = line, col
		b.line += 1 + lines
		return n
	}
	n, ok := scalarNode(v)
	if !ok {
		b.ok = false
		return nil
	}
	n.Line, n.Column = line, col
	b.line++
	return n
}

// literalNode is a multi-line string value as written (a literal block,
// "|", "|-" or "|+" by its trailing newlines) and read back, and the
// lines its content takes below the indicator's, for lines of printable
// ASCII: without leading space or newline (which would need an
// indentation indicator) and without a space before a line break or at
// the end (where the emitter falls back to double quotes). nil for
// anything else.
func literalNode(s string) (*yaml.Node, int) {
	if s[0] == ' ' || s[0] == '\n' || s[len(s)-1] == ' ' || strings.Contains(s, " \n") {
		return nil, 0
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < 0x20 || s[i] > 0x7e) && s[i] != '\n' {
			return nil, 0
		}
	}
	lines := strings.Count(s, "\n")
	if s[len(s)-1] != '\n' {
		lines++
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Style: yaml.LiteralStyle, Value: s}, lines
}

// scalarNode is a non-string scalar as yaml.v3's encoder writes it (plain)
// and its parser reads it back, or a string (stringNode).
func scalarNode(v interface{}) (*yaml.Node, bool) {
	var text string
	switch x := v.(type) {
	case string:
		n, _ := stringNode(x)
		return n, n != nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagNull, Value: "null"}, true
	case bool:
		text = strconv.FormatBool(x)
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: text}, true
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.Itoa(x)}, true
	case float64:
		switch {
		case math.IsInf(x, 1):
			text = ".inf"
		case math.IsInf(x, -1):
			text = "-.inf"
		case math.IsNaN(x):
			text = ".nan"
		default:
			text = strconv.FormatFloat(x, 'g', -1, 64)
		}
		// the parser resolves the text: 1.0 is written 1 and read as an int
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: resolvedTag(text), Value: text}, true
	}
	return nil, false
}

func resolvedTag(plain string) string {
	return (&yaml.Node{Kind: yaml.ScalarNode, Value: plain}).ShortTag()
}

// stringNode is a string scalar as written and read back, and the columns
// it takes, for strings of printable ASCII but "<<" and maybeBase60's: plain when the encoder allows
// it (the text reads as a string, not as YAML 1.1's booleans or base 60
// floats) and the emitter does too (no indicator where it would be
// taken for one), single-quoted when only the emitter refuses, and
// double-quoted when the encoder does. nil for anything else.
func stringNode(s string) (*yaml.Node, int) {
	if s == "<<" {
		return nil, 0 // read back as a merge key
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return nil, 0
		}
	}
	if s != "" && maybeBase60(s) {
		return nil, 0
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: s}
	if s == "" || isOldBool(s) || resolvedTag(s) != yaml.NodeTagString {
		if strings.ContainsAny(s, `"\`) {
			return nil, 0
		}
		n.Style = yaml.DoubleQuotedStyle
		return n, len(s) + 2
	}
	if !blockPlainAllowed(s) {
		n.Style = yaml.SingleQuotedStyle
		return n, len(s) + 2 + strings.Count(s, "'")
	}
	return n, len(s)
}

// isOldBool: YAML 1.1's booleans, which yaml.v3's encoder quotes.
func isOldBool(s string) bool {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return true
	}
	return false
}

// maybeBase60 is a superset of the strings yaml.v3's encoder quotes as
// YAML 1.1 base 60 floats (1:20): a sign or digit first and a colon. They
// take the text path, which tells them apart.
func maybeBase60(s string) bool {
	c := s[0]
	return (c == '+' || c == '-' || c >= '0' && c <= '9') && strings.IndexByte(s, ':') >= 0
}

// blockPlainAllowed is yaml.v3's emitter analysis (block context) for a
// non-empty string of printable ASCII.
func blockPlainAllowed(s string) bool {
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		return false
	}
	switch s[0] {
	case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '?', '-':
		if len(s) == 1 || s[1] == ' ' {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':':
			if i+1 == len(s) || s[i+1] == ' ' {
				return false
			}
		case '#':
			if i > 0 && s[i-1] == ' ' {
				return false
			}
		}
	}
	return true
}

// keyLess is yaml.v3's order of string map keys (its keyList.Less) for
// ASCII: letters by code, a letter and another character by whether a
// digit came before, runs of digits by value.
func keyLess(a, b string) bool {
	digits := false
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			digits = isDigit(a[i])
			continue
		}
		al, bl := isLetter(a[i]), isLetter(b[i])
		if al && bl {
			return a[i] < b[i]
		}
		if al || bl {
			if digits {
				return al
			}
			return bl
		}
		var an, bn int64
		if a[i] == '0' || b[i] == '0' {
			for j := i - 1; j >= 0 && isDigit(a[j]); j-- {
				if a[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		ai, bi := i, i
		for ; ai < len(a) && isDigit(a[ai]); ai++ {
			an = an*10 + int64(a[ai]-'0')
		}
		for ; bi < len(b) && isDigit(b[bi]); bi++ {
			bn = bn*10 + int64(b[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return a[i] < b[i]
	}
	return len(a) < len(b)
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
