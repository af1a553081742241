package variant

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files under testdata/")

// checkGoldenTree compares got with the directory wantDir, or rewrites it
// with -update.
func checkGoldenTree(t *testing.T, wantDir string, got kptpkg.Tree) {
	t.Helper()
	if *updateGolden {
		if err := os.RemoveAll(wantDir); err != nil {
			t.Fatal(err)
		}
		if err := got.Write(wantDir); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := kptpkg.ReadTree(wantDir)
	if err != nil {
		t.Fatalf("reading golden %s (run go test -update to create it): %v", wantDir, err)
	}
	for _, p := range unionPaths(want, got) {
		w, okW := want[p]
		g, okG := got[p]
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

// checkGoldenFile compares got with the file want, or rewrites it.
func checkGoldenFile(t *testing.T, want string, got []byte) {
	t.Helper()
	if *updateGolden {
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

func unionPaths(a, b kptpkg.Tree) []string {
	u := kptpkg.Tree{}
	for p := range a {
		u[p] = nil
	}
	for p := range b {
		u[p] = nil
	}
	return u.Paths()
}

// caseDirs lists the test cases under testdata/<kind>.
func caseDirs(t *testing.T, kind string) []string {
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

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
