package textdiff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n$`)

// patchLine is one line of a hunk body: its mark and its text, with the
// newline removed when a "\ No newline at end of file" marker follows.
type patchLine struct {
	mark byte
	text string
}

// applyUnified applies a diff produced by Unified to a, checking strictly
// that the diff is well formed: header counts agree with hunk bodies, hunks
// are in order and do not touch, context and deleted lines match a, and
// every hunk has a change with exactly context lines of context at either
// end, or as many as the file has.
func applyUnified(a []byte, diff string, context int) ([]byte, error) {
	lines := strings.SplitAfter(diff, "\n")
	if last := lines[len(lines)-1]; last != "" {
		return nil, fmt.Errorf("diff does not end with a newline: %q", last)
	}
	lines = lines[:len(lines)-1]
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return nil, fmt.Errorf("missing file headers")
	}
	lines = lines[2:]

	src := strings.SplitAfter(string(a), "\n")
	if src[len(src)-1] == "" {
		src = src[:len(src)-1]
	}
	var out []string
	pos := 0 // next line of src to copy
	for len(lines) > 0 {
		m := hunkHeader.FindStringSubmatch(lines[0])
		if m == nil {
			return nil, fmt.Errorf("bad hunk header %q", lines[0])
		}
		lines = lines[1:]
		num := func(s string, def int) int {
			if s == "" {
				return def
			}
			n, _ := strconv.Atoi(s)
			return n
		}
		oldStart, oldLen := num(m[1], 0), num(m[2], 1)
		newStart, newLen := num(m[3], 0), num(m[4], 1)
		// A range of no lines names the line before it.
		if oldLen > 0 {
			oldStart--
		}
		if newLen > 0 {
			newStart--
		}
		if oldStart < pos {
			return nil, fmt.Errorf("hunk at old line %d overlaps the previous one (at %d)", oldStart, pos)
		}
		if pos > 0 && oldStart == pos {
			return nil, fmt.Errorf("hunks touching at old line %d should have been merged", pos)
		}
		if oldStart > len(src) {
			return nil, fmt.Errorf("hunk starts at line %d past the end (%d)", oldStart, len(src))
		}
		out = append(out, src[pos:oldStart]...)
		pos = oldStart
		if newStart != len(out) {
			return nil, fmt.Errorf("hunk new start %d, want %d", newStart, len(out))
		}

		var body []patchLine
		for nOld, nNew := 0, 0; nOld < oldLen || nNew < newLen; {
			if len(lines) == 0 {
				return nil, fmt.Errorf("hunk body ends early")
			}
			l := lines[0]
			lines = lines[1:]
			switch l[0] {
			case ' ':
				nOld++
				nNew++
			case '-':
				nOld++
			case '+':
				nNew++
			default:
				return nil, fmt.Errorf("bad hunk line %q", l)
			}
			body = append(body, patchLine{l[0], l[1:]})
			if len(lines) > 0 && lines[0] == noNewline {
				body[len(body)-1].text = strings.TrimSuffix(l[1:], "\n")
				lines = lines[1:]
			}
		}
		if nOld, nNew := count(body, '-', ' '), count(body, '+', ' '); nOld != oldLen || nNew != newLen {
			return nil, fmt.Errorf("hunk has %d old and %d new lines, header says %d and %d", nOld, nNew, oldLen, newLen)
		}
		lead := 0
		for lead < len(body) && body[lead].mark == ' ' {
			lead++
		}
		trail := 0
		for trail < len(body) && body[len(body)-1-trail].mark == ' ' {
			trail++
		}
		if lead == len(body) {
			return nil, fmt.Errorf("hunk without changes")
		}
		if lead > context || trail > context {
			return nil, fmt.Errorf("hunk has %d leading and %d trailing context lines, want at most %d", lead, trail, context)
		}
		if lead < context && oldStart > 0 {
			return nil, fmt.Errorf("hunk has only %d leading context lines", lead)
		}
		if trail < context && oldStart+oldLen < len(src) {
			return nil, fmt.Errorf("hunk has only %d trailing context lines", trail)
		}

		for _, pl := range body {
			if pl.mark != '+' {
				if pos >= len(src) || src[pos] != pl.text {
					return nil, fmt.Errorf("line %d: hunk expects %q", pos+1, pl.text)
				}
				pos++
			}
			if pl.mark != '-' {
				out = append(out, pl.text)
			}
		}
	}
	out = append(out, src[pos:]...)
	return []byte(strings.Join(out, "")), nil
}

func count(body []patchLine, marks ...byte) int {
	n := 0
	for _, pl := range body {
		if bytes.IndexByte(marks, pl.mark) >= 0 {
			n++
		}
	}
	return n
}

// checkUnified checks the diff of a and b by applying it to a.
func checkUnified(t *testing.T, a, b []byte, context int) {
	t.Helper()
	got := Unified("a/f", "b/f", a, b, context)
	switch {
	case bytes.Equal(a, b):
		if got != "" {
			t.Fatalf("diff of equal inputs is not empty:\n%s", got)
		}
	case isBinary(a) || isBinary(b):
		if want := "Binary files a/f and b/f differ\n"; got != want {
			t.Fatalf("binary diff = %q, want %q", got, want)
		}
	default:
		patched, err := applyUnified(a, got, context)
		if err != nil {
			t.Fatalf("bad diff of %q and %q (context %d): %v\n%s", a, b, context, err, got)
		}
		if !bytes.Equal(patched, b) {
			t.Fatalf("diff of %q and %q (context %d) applies to %q\n%s", a, b, context, patched, got)
		}
	}
}

func FuzzUnified(f *testing.F) {
	for _, tc := range unifiedCases {
		f.Add([]byte(tc.a), []byte(tc.b), uint8(max(tc.context, 0)))
	}
	f.Add([]byte("a\nb\nc\nd\ne\nf\ng\nh\n"), []byte("a\nB\nc\nd\ne\nf\ng\nH\nh"), uint8(1))
	f.Add([]byte("}\n\n}\n\nx\n"), []byte("\n}\nx\n}\n\n"), uint8(2))
	f.Fuzz(func(t *testing.T, a, b []byte, context uint8) {
		checkUnified(t, a, b, int(context%8))
	})
}

// TestApplyRandom runs the FuzzUnified check on seeded random inputs with
// many repeated lines, so that plain `go test` covers it broadly.
func TestApplyRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 7))
	for range 3000 {
		a, b := genPair(r, lineKind(r.IntN(3)))
		checkUnified(t, a, b, r.IntN(6))
	}
}

// costCapPair returns two unrelated 10,000-line files over 40 distinct
// lines: an edit script of about 14,000 lines, so the matching step hits
// its cost cap (4096) and settles for a possibly non-minimal diff.
func costCapPair() (a, b []byte) {
	r := rand.New(rand.NewPCG(5000, 1))
	gen := func() []byte {
		var sb strings.Builder
		for range 10000 {
			fmt.Fprintf(&sb, "%d\n", r.IntN(40))
		}
		return []byte(sb.String())
	}
	return gen(), gen()
}

// TestCostCapStillCorrect checks that a diff made under the cost cap is
// still a correct one.
func TestCostCapStillCorrect(t *testing.T) {
	t.Parallel()
	a, b := costCapPair()
	checkUnified(t, a, b, 3)
}
