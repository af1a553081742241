package textdiff

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const gnuDiff = "/usr/bin/diff"

// requireGNUDiff skips the test unless /usr/bin/diff is GNU diff, whose
// output format the package reproduces.
func requireGNUDiff(t *testing.T) {
	t.Helper()
	out, err := exec.Command(gnuDiff, "--version").Output()
	if err != nil {
		t.Skipf("%s not available: %v", gnuDiff, err)
	}
	if !bytes.Contains(out, []byte("GNU diffutils")) {
		t.Skipf("%s is not GNU diff", gnuDiff)
	}
}

// runGNUDiff returns the output of `diff -u` on a and b.
func runGNUDiff(t *testing.T, dir string, a, b []byte, context int) string {
	t.Helper()
	pa, pb := filepath.Join(dir, "old"), filepath.Join(dir, "new")
	if err := os.WriteFile(pa, a, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gnuDiff, "-U", strconv.Itoa(context),
		"--label", "a/file.txt", "--label", "b/file.txt", pa, pb)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("diff: %v", err)
	}
	return string(out)
}

// lineKind selects how genPair makes up lines.
type lineKind int

const (
	// uniqueLines are all distinct, so the minimal diff is unambiguous.
	uniqueLines lineKind = iota
	// fewLines come from a tiny alphabet, so most edits can be placed in
	// several equally short ways, which exercises the choice between them.
	fewLines
	// mixedLines are like source code: mostly distinct lines, with blank
	// lines and braces in between, which exercises the discarding of
	// lines without counterpart and of very common lines.
	mixedLines
)

// genPair returns a random file and an edited copy of it.
func genPair(r *rand.Rand, kind lineKind) (a, b []byte) {
	serial := 0
	common := [...]string{"a\n", "b\n", "c\n", "\n", "}\n"}
	newLine := func() string {
		serial++
		switch {
		case kind == uniqueLines:
			return fmt.Sprintf("line %d\n", serial)
		case kind == mixedLines && r.IntN(3) > 0:
			return fmt.Sprintf("x%d\n", r.IntN(60))
		}
		return common[r.IntN(len(common))]
	}
	n, edits := r.IntN(40), r.IntN(8)
	switch r.IntN(16) {
	case 0:
		n, edits = r.IntN(300), r.IntN(30)
	case 1:
		n, edits = r.IntN(2000), r.IntN(100)
	}
	old := make([]string, n)
	for i := range old {
		old[i] = newLine()
	}
	edited := append([]string(nil), old...)
	for range edits {
		pos := r.IntN(len(edited) + 1)
		switch r.IntN(3) {
		case 0: // insert a few lines
			ins := make([]string, 1+r.IntN(3))
			for i := range ins {
				ins[i] = newLine()
			}
			edited = append(edited[:pos], append(ins, edited[pos:]...)...)
		case 1: // delete a few lines
			end := min(pos+1+r.IntN(3), len(edited))
			edited = append(edited[:pos], edited[end:]...)
		default: // replace a line
			if pos < len(edited) {
				edited[pos] = newLine()
			}
		}
	}
	a, b = []byte(strings.Join(old, "")), []byte(strings.Join(edited, ""))
	// Drop the final newline now and then, on either side or both.
	switch r.IntN(5) {
	case 0:
		a = bytes.TrimSuffix(a, []byte("\n"))
	case 1:
		b = bytes.TrimSuffix(b, []byte("\n"))
	case 2:
		a = bytes.TrimSuffix(a, []byte("\n"))
		b = bytes.TrimSuffix(b, []byte("\n"))
	}
	return a, b
}

func TestMatchesGNUDiff(t *testing.T) {
	t.Parallel()
	requireGNUDiff(t)
	for _, mode := range []struct {
		name string
		kind lineKind
	}{{"unique", uniqueLines}, {"few", fewLines}, {"mixed", mixedLines}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(uint64(mode.kind), 42))
			dir := t.TempDir()
			iters := 1500
			if testing.Short() {
				iters = 200
			}
			if v := os.Getenv("TEXTDIFF_GNU_ITERS"); v != "" {
				iters, _ = strconv.Atoi(v)
			}
			mismatch := 0
			for i := range iters {
				a, b := genPair(r, mode.kind)
				context := [...]int{0, 1, 2, 3, 3, 3, 5, 10}[r.IntN(8)]
				want := runGNUDiff(t, dir, a, b, context)
				got := Unified("a/file.txt", "b/file.txt", a, b, context)
				if got != want {
					mismatch++
					if mismatch <= 3 {
						t.Errorf("case %d (context %d): output differs from GNU diff\na: %q\nb: %q\ngot:\n%s\nwant:\n%s", i, context, a, b, got, want)
					}
				}
			}
			if mismatch > 0 {
				t.Errorf("%d of %d cases differ", mismatch, iters)
			}
		})
	}
}

func TestTableCasesMatchGNUDiff(t *testing.T) {
	t.Parallel()
	requireGNUDiff(t)
	dir := t.TempDir()
	for _, tc := range unifiedCases {
		if tc.context < 0 {
			continue // GNU diff rejects a negative context
		}
		want := runGNUDiff(t, dir, []byte(tc.a), []byte(tc.b), tc.context)
		want = strings.ReplaceAll(want, "a/file.txt", "a/f")
		want = strings.ReplaceAll(want, "b/file.txt", "b/f")
		if want != tc.want {
			t.Errorf("%s: GNU diff prints\n%s\nbut the table expects\n%s", tc.name, want, tc.want)
		}
	}
}

// TestCostCapMatchesGNUDiff checks that the cost cap gives up where GNU
// diff's does, and picks the same point.
func TestCostCapMatchesGNUDiff(t *testing.T) {
	t.Parallel()
	requireGNUDiff(t)
	if testing.Short() {
		t.Skip("slow")
	}
	a, b := costCapPair()
	want := runGNUDiff(t, t.TempDir(), a, b, 3)
	if got := Unified("a/file.txt", "b/file.txt", a, b, 3); got != want {
		t.Errorf("output differs from GNU diff (%d vs %d bytes)", len(got), len(want))
	}
}
