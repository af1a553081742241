package textdiff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchFiles returns a 10,000-line file resembling YAML and a copy with 20
// scattered edits: replaced, inserted and deleted lines.
func benchFiles() (a, b []byte) {
	r := rand.New(rand.NewPCG(10000, 20))
	lines := make([]string, 10000)
	for i := range lines {
		switch i % 5 {
		case 0:
			lines[i] = "---\n"
		case 1:
			lines[i] = "kind: ConfigMap\n"
		default:
			lines[i] = fmt.Sprintf("  key%d: value-%d\n", i, r.IntN(1000))
		}
	}
	edited := append([]string(nil), lines...)
	for k := range 20 {
		pos := (k*len(edited))/20 + r.IntN(len(edited)/40)
		switch k % 3 {
		case 0:
			edited[pos] = fmt.Sprintf("  changed%d: true\n", k)
		case 1:
			edited = append(edited[:pos], append([]string{fmt.Sprintf("  added%d: true\n", k)}, edited[pos:]...)...)
		default:
			edited = append(edited[:pos], edited[pos+1:]...)
		}
	}
	return []byte(strings.Join(lines, "")), []byte(strings.Join(edited, ""))
}

func TestBenchFilesDiff(t *testing.T) {
	t.Parallel()
	a, b := benchFiles()
	checkUnified(t, a, b, 3)
	if got := strings.Count(Unified("a/f", "b/f", a, b, 3), "\n@@ "); got < 10 {
		t.Errorf("only %d hunks for 20 scattered edits", got+1)
	}
}

func BenchmarkUnified10kLines20Changes(b *testing.B) {
	old, edited := benchFiles()
	b.SetBytes(int64(len(old) + len(edited)))
	b.ReportAllocs()
	for b.Loop() {
		Unified("a/f", "b/f", old, edited, 3)
	}
}
