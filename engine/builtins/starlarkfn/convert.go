package starlarkfn

import (
	"strconv"
	"strings"
	"unicode/utf8"

	sl "github.com/kptdev/krm-functions-catalog/functions/go/starlark/third_party/sigs.k8s.io/kustomize/kyaml/fn/runtime/starlark"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/qri-io/starlib/util"
	"go.starlark.net/starlark"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The catalog hands a script its resources by encoding every item to
// YAML, parsing the text again, decoding the nodes into Go maps and
// converting those to Starlark values; the script's result goes back
// through Go maps, one YAML document for the whole list, a parse, and an
// encode and a parse per item. Those text round trips were most of a
// small render's time. The conversions here give the same values and
// nodes directly, for the node forms where that is shown to hold
// (TestDirectConversionMatchesCatalog, FuzzDirectConversion); anything
// else (aliases, merge keys, custom tags, duplicate or non-string keys,
// invalid UTF-8, a script that leaves something other than a list of
// mappings) takes the catalog's own path, so results and errors stay
// the catalog's.

// resourceListValue is the Starlark value of the catalog's ResourceList
// (apiVersion, kind, items, functionConfig) for rl.
func resourceListValue(rl *fn.ResourceList) (starlark.Value, error) {
	if v, ok := directResourceList(rl); ok {
		return v, nil
	}
	return catalogResourceList(rl)
}

// catalogResourceList is the catalog's conversion (StarlarkRun.Transform
// and SimpleFilter.Filter): each item encoded and parsed again, wrapped,
// decoded to Go values and converted.
func catalogResourceList(rl *fn.ResourceList) (starlark.Value, error) {
	fc, err := yaml.Parse(rl.FunctionConfig.String())
	if err != nil {
		return nil, err
	}
	nodes := make([]*yaml.RNode, 0, len(rl.Items))
	for _, obj := range rl.Items {
		n, err := yaml.Parse(obj.String())
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	in, err := sl.WrapResources(nodes, fc)
	if err != nil {
		return nil, err
	}
	m, err := in.Map()
	if err != nil {
		return nil, err
	}
	return util.Marshal(m)
}

// directResourceList converts the items' and the config's nodes without
// text in between. The SDK objects lend their nodes for the reading: they
// are moved out and straight back in.
func directResourceList(rl *fn.ResourceList) (starlark.Value, bool) {
	items := make([]starlark.Value, len(rl.Items))
	for i := range rl.Items {
		n := borrowNode(&rl.Items[i])
		v, ok := nodeValue(n)
		if !ok {
			return nil, false
		}
		items[i] = v
	}
	if rl.FunctionConfig == nil {
		return nil, false
	}
	fc, ok := nodeValue(borrowNode(&rl.FunctionConfig))
	if !ok {
		return nil, false
	}
	if _, isDict := fc.(*starlark.Dict); !isDict {
		return nil, false
	}
	// WrapResources's mapping: the config always set, as a mapping is
	// never a tagged null that SetField would clear.
	d := starlark.NewDict(4)
	_ = d.SetKey(starlark.String("apiVersion"), starlark.String(kio.ResourceListAPIVersion))
	_ = d.SetKey(starlark.String("kind"), starlark.String(kio.ResourceListKind))
	_ = d.SetKey(starlark.String("items"), starlark.NewList(items))
	_ = d.SetKey(starlark.String("functionConfig"), fc)
	return d, true
}

// borrowNode returns the yaml node of *o, which stays *o's: the SDK has no
// read accessor, so the node is moved out and into a new KubeObject.
func borrowNode(o **fn.KubeObject) *yaml.Node {
	rn := (*o).MoveToResourceNode()
	n := rn.YNode()
	*o = fn.MoveToKubeObject(rn)
	return n
}

// nodeValue is the Starlark value util.Marshal makes of what yaml.v3
// decodes (into interface{}) from the node's encoding parsed again; ok is
// false where that is not certain. Dict keys come in document order (the
// catalog's come in Go's random map order).
func nodeValue(n *yaml.Node) (starlark.Value, bool) { return nodeValueIn(n, false) }

// nodeValueIn is nodeValue within a flow collection or not.
func nodeValueIn(n *yaml.Node, flow bool) (starlark.Value, bool) {
	flow = flow || n.Style&yaml.FlowStyle != 0
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return nil, false
		}
		return nodeValueIn(n.Content[0], flow)
	case yaml.MappingNode:
		if !untaggedOr(n.Tag, yaml.NodeTagMap) || len(n.Content)%2 != 0 {
			return nil, false
		}
		d := starlark.NewDict(len(n.Content) / 2)
		for i := 0; i < len(n.Content); i += 2 {
			k, ok := keyString(n.Content[i])
			if !ok {
				return nil, false
			}
			v, ok := nodeValueIn(n.Content[i+1], flow)
			if !ok {
				return nil, false
			}
			_ = d.SetKey(starlark.String(k), v)
		}
		// a repeated key: yaml.v3 refuses the mapping
		if d.Len() != len(n.Content)/2 {
			return nil, false
		}
		return d, true
	case yaml.SequenceNode:
		if !untaggedOr(n.Tag, yaml.NodeTagSeq) {
			return nil, false
		}
		elems := make([]starlark.Value, len(n.Content))
		for i, c := range n.Content {
			v, ok := nodeValueIn(c, flow)
			if !ok {
				return nil, false
			}
			elems[i] = v
		}
		return starlark.NewList(elems), true
	case yaml.ScalarNode:
		if flow && n.Value == "" {
			return nil, false // written '' in a flow collection: a string
		}
		return scalarValue(n)
	}
	return nil, false
}

const longTagPrefix = "tag:yaml.org,2002:"

// shortTag is yaml.v3's: the long form of a core tag as !!name.
func shortTag(tag string) string {
	if rest, ok := strings.CutPrefix(tag, longTagPrefix); ok {
		return "!!" + rest
	}
	return tag
}

func untaggedOr(tag, want string) bool { return tag == "" || shortTag(tag) == want }

var quotedStyles = yaml.SingleQuotedStyle | yaml.DoubleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle

// keyString is a mapping key that yaml.v3 decodes as a string, as it
// stays across an encode and a parse (a "<<" could turn into a merge key).
func keyString(k *yaml.Node) (string, bool) {
	if k.Kind != yaml.ScalarNode || k.Value == "<<" || k.Style&yaml.FoldedStyle != 0 || !utf8.ValidString(k.Value) || !literalReadsBack(k) {
		return "", false
	}
	tag := shortTag(k.Tag)
	if tag == yaml.NodeTagString || tag == "" && k.Style&quotedStyles != 0 {
		return k.Value, true
	}
	if tag == "" && k.ShortTag() == yaml.NodeTagString {
		return k.Value, true
	}
	return "", false
}

// scalarValue converts a scalar as yaml.v3 decodes it after the
// catalog's encode and parse. The encoder keeps a string a string
// (quoting it when it would read otherwise) and writes other values
// plain, keeping their tag when the plain text would resolve to another;
// only a quoted scalar with a non-string tag and no explicit tag style
// changes type on the way (it comes back a string), and takes the
// catalog's path.
func scalarValue(n *yaml.Node) (starlark.Value, bool) {
	if !utf8.ValidString(n.Value) {
		return nil, false // the encoder writes !!binary or fails
	}
	if n.Style&yaml.FoldedStyle != 0 || !literalReadsBack(n) {
		return nil, false // yaml.v3 may not read back what it folded
	}
	tag := shortTag(n.Tag)
	quoted := n.Style&quotedStyles != 0
	switch {
	case tag == yaml.NodeTagString, tag == "" && quoted:
		return starlark.String(n.Value), true
	case quoted && n.Style&yaml.TaggedStyle == 0:
		return nil, false
	case n.Value == "<<":
		return nil, false
	}
	switch tag {
	case "", yaml.NodeTagInt:
		if i, ok := plainDecimal(n.Value); ok {
			return starlark.MakeInt(i), true
		}
	}
	switch tag {
	case "", yaml.NodeTagBool:
		switch n.Value {
		case "true":
			return starlark.True, true
		case "false":
			return starlark.False, true
		}
	}
	switch tag {
	case "", yaml.NodeTagNull:
		switch n.Value {
		case "", "~", "null":
			return starlark.None, true
		}
	}
	switch tag {
	case "", yaml.NodeTagInt, yaml.NodeTagFloat, yaml.NodeTagBool, yaml.NodeTagNull, "!!timestamp":
	default:
		return nil, false
	}
	// anything else as yaml.v3 decodes it
	var v interface{}
	if err := n.Decode(&v); err != nil {
		return nil, false
	}
	switch v.(type) {
	case nil, bool, int, int64, uint64, float64, string:
		sv, err := util.Marshal(v)
		return sv, err == nil
	}
	return nil, false
}

// literalReadsBack: a literal block of printable ASCII lines; yaml.v3
// writes a tab or other control character into a literal block as it is,
// which its parser may then refuse.
func literalReadsBack(n *yaml.Node) bool {
	if n.Style&yaml.LiteralStyle == 0 {
		return true
	}
	for i := 0; i < len(n.Value); i++ {
		if c := n.Value[i]; (c < 0x20 || c > 0x7e) && c != '\n' {
			return false
		}
	}
	return true
}

// plainDecimal parses the common integer form, digits without a sign, a
// leading zero (octal to yaml.v3) or underscores, that fits an int.
func plainDecimal(s string) (int, bool) {
	if s == "" || len(s) > 18 || s[0] == '0' && len(s) > 1 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(s)
	return i, err == nil
}

// resourceListItems is the catalog's reading of the script's result:
// the value decoded to Go values, and each item of its items list a
// KubeObject parsed from that item's YAML.
func resourceListItems(value starlark.Value) (fn.KubeObjects, error) {
	out, err := util.Unmarshal(value)
	if err != nil {
		return nil, err
	}
	if objs, ok := directItems(out); ok {
		return objs, nil
	}
	return catalogItems(out)
}

// catalogItems is the catalog's path (SimpleFilter.Filter and
// StarlarkRun.Transform): the whole list encoded and parsed, each item
// encoded again and parsed into a KubeObject.
func catalogItems(out interface{}) (fn.KubeObjects, error) {
	b, err := yaml.Marshal(out)
	if err != nil {
		return nil, err
	}
	rn, err := yaml.Parse(string(b))
	if err != nil {
		return nil, err
	}
	outNodes, _, err := sl.UnwrapResources(rn)
	if err != nil {
		return nil, err
	}
	objs := make(fn.KubeObjects, 0, len(outNodes))
	for _, n := range outNodes {
		s, err := n.String()
		if err != nil {
			return nil, err
		}
		obj, err := fn.ParseKubeObject([]byte(s))
		if err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// directItems reads each item on its own: its nodes built directly
// (itemNode), or else its own document encoded and parsed. The encoder
// chooses every scalar's style from its value alone and a parsed node
// re-encodes to the text it came from, so an item's own document is the
// text the catalog's second encode produces. ok is false when the list
// holds anything whose encoding might fail, or items that are not
// mappings.
func directItems(out interface{}) (fn.KubeObjects, bool) {
	m, ok := out.(map[string]interface{})
	if !ok {
		return nil, false
	}
	items, ok := m["items"].([]interface{})
	if !ok {
		return nil, false
	}
	for k, v := range m {
		if k != "items" && !plainData(v) {
			return nil, false
		}
	}
	objs := make(fn.KubeObjects, 0, len(items))
	for _, it := range items {
		switch it.(type) {
		case map[string]interface{}, map[interface{}]interface{}:
		default:
			return nil, false
		}
		if !plainData(it) {
			return nil, false
		}
		if m, ok := it.(map[string]interface{}); ok {
			if n, ok := itemNode(m); ok {
				objs = append(objs, fn.MoveToKubeObject(yaml.NewRNode(n)))
				continue
			}
		}
		b, err := yaml.Marshal(it)
		if err != nil {
			return nil, false
		}
		obj, err := fn.ParseKubeObject(b)
		if err != nil {
			return nil, false
		}
		objs = append(objs, obj)
	}
	return objs, true
}

// plainData reports whether v holds only what util.Unmarshal makes of
// Starlark's own data types, which the YAML encoder always writes, and
// which read back as they were written.
func plainData(v interface{}) bool {
	switch x := v.(type) {
	case nil, bool, int, float64:
		return true
	case string:
		// "<<" is written plain and parsed as a merge key, which the
		// catalog's second encode then writes with its tag
		return x != "<<"
	case []interface{}:
		for _, e := range x {
			if !plainData(e) {
				return false
			}
		}
		return true
	case map[string]interface{}:
		for k, e := range x {
			if !plainData(k) || !plainData(e) {
				return false
			}
		}
		return true
	case map[interface{}]interface{}:
		for k, e := range x {
			if !plainData(k) || !plainData(e) {
				return false
			}
		}
		return true
	}
	return false
}
