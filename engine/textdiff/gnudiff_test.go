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

// genPair returns a random file and an edited copy of it. With unique set,
// every line is distinct, so the minimal diff is unambiguous; otherwise the
// lines come from a tiny alphabet and most edits can be placed in several
// equally short ways, which exercises the choice between them.
func genPair(r *rand.Rand, unique bool) (a, b []byte) {
	serial := 0
	newLine := func() string {
		serial++
		if unique {
			return fmt.Sprintf("line %d\n", serial)
		}
		return [...]string{"a\n", "b\n", "c\n", "\n", "}\n"}[r.IntN(5)]
	}
	n := r.IntN(40)
	if r.IntN(8) == 0 {
		n = r.IntN(300)
	}
	old := make([]string, n)
	for i := range old {
		old[i] = newLine()
	}
	edited := append([]string(nil), old...)
	for range r.IntN(8) {
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
		name   string
		unique bool
	}{{"unique", true}, {"repetitive", false}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(1, 2))
			if !mode.unique {
				r = rand.New(rand.NewPCG(3, 4))
			}
			dir := t.TempDir()
			iters := 1500
			if testing.Short() {
				iters = 200
			}
			mismatch := 0
			for i := range iters {
				a, b := genPair(r, mode.unique)
				context := [...]int{0, 1, 2, 3, 3, 3, 5}[r.IntN(7)]
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
