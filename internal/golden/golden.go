// Package golden compares test output with files under testdata/ and
// rewrites them with -update; the engine's and the variant planner's tests
// share it (imported by tests only).
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// Update is -update: rewrite golden files instead of comparing.
var Update = flag.Bool("update", false, "rewrite golden files under testdata/")

// CheckTree compares got with the directory want, or rewrites it with
// -update. A non-nil normalize first replaces what differs between runs (paths) in each file.
func CheckTree(t *testing.T, wantDir string, got kptpkg.Tree, normalize func([]byte) []byte) {
	t.Helper()
	norm := got
	if normalize != nil {
		norm = kptpkg.Tree{}
		for p, b := range got {
			norm[p] = normalize(b)
		}
	}
	if *Update {
		if err := os.RemoveAll(wantDir); err != nil {
			t.Fatal(err)
		}
		if err := norm.Write(wantDir); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := kptpkg.ReadTree(wantDir)
	if err != nil {
		t.Fatalf("reading golden %s (run go test -update to create it): %v", wantDir, err)
	}
	for _, p := range UnionPaths(want, norm) {
		w, okW := want[p]
		g, okG := norm[p]
		switch {
		case !okW:
			t.Errorf("%s: unexpected file %s:\n%s", wantDir, p, g)
		case !okG:
			t.Errorf("%s: missing file %s", wantDir, p)
		case !bytes.Equal(w, g):
			t.Errorf("%s: file %s differs (-want +got):\n%s", wantDir, p, cmp.Diff(string(w), string(g)))
		}
	}
}

// CheckFile compares got with the file want, or rewrites it.
func CheckFile(t *testing.T, want string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(want, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatalf("reading golden %s (run go test -update to create it): %v", want, err)
	}
	if !bytes.Equal(w, got) {
		t.Errorf("%s differs (-want +got):\n%s", want, cmp.Diff(string(w), string(got)))
	}
}

// SameTrees fails t with a diff for each file that differs between want
// and got (labelled with what).
func SameTrees(t *testing.T, what string, want, got kptpkg.Tree) {
	t.Helper()
	for _, p := range UnionPaths(want, got) {
		if string(want[p]) != string(got[p]) {
			t.Errorf("%s: %s differs (-want +got):\n%s", what, p, cmp.Diff(string(want[p]), string(got[p])))
		}
	}
}

// UnionPaths lists the paths of a and b, sorted.
func UnionPaths(a, b kptpkg.Tree) []string {
	u := kptpkg.Tree{}
	for p := range a {
		u[p] = nil
	}
	for p := range b {
		u[p] = nil
	}
	return u.Paths()
}

// Replacer replaces each old string of pairs (old, new, ...) in a file, for
// paths that differ between runs.
func Replacer(pairs ...string) func([]byte) []byte {
	r := strings.NewReplacer(pairs...)
	return func(b []byte) []byte { return []byte(r.Replace(string(b))) }
}

// CaseDirs lists the test cases under testdata/<kind>.
func CaseDirs(t *testing.T, kind string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", kind))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// Exists reports whether p exists.
func Exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
