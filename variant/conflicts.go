package variant

import (
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/engine/pkgmerge"
)

// ConflictsNote says, one line per field, where an upgrade took
// upstream's value over a local edit, so a plan never takes it silently:
// plain git writes it into the draft's commit message and the CLI's
// output ("" when there are none).
func ConflictsNote(cs []pkgmerge.Conflict) string {
	if len(cs) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Conflicts: %d field(s) changed both locally and upstream; upstream's value was taken (check them before proposing):", len(cs))
	for _, c := range cs {
		fmt.Fprintf(&b, "\n- %s: %s: %s: local %s, upstream %s", c.File, c.Resource, c.Field, quoteValue(c.Local), quoteValue(c.Upstream))
	}
	return b.String()
}

// quoteValue keeps a value on one line and bounded.
func quoteValue(v string) string {
	if len(v) > 120 {
		v = v[:117] + "..."
	}
	return fmt.Sprintf("%q", v)
}
