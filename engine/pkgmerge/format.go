package pkgmerge

import (
	"fmt"
	"strings"
)

// Format writes the conflict for a person, after indent and label: on one
// line when both values are scalars; a list or other multi-line value as
// an indented YAML block under "local:" and "upstream:", so it reads as
// YAML. The text ends with a newline.
func (c Conflict) Format(indent, label string) string {
	if !strings.Contains(c.Local, "\n") && !strings.Contains(c.Upstream, "\n") {
		return indent + label + c.String() + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s%s: %s: %s (upstream kept):\n", indent, label, c.File, c.Resource, c.Field)
	for _, v := range []struct{ side, value string }{{"local", c.Local}, {"upstream", c.Upstream}} {
		fmt.Fprintf(&b, "%s  %s:\n", indent, v.side)
		for _, line := range strings.Split(strings.TrimRight(v.value, "\n"), "\n") {
			fmt.Fprintf(&b, "%s    %s\n", indent, line)
		}
	}
	return b.String()
}
