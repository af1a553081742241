package archcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoPackageOverLimit holds the repository to the package size rule.
func TestNoPackageOverLimit(t *testing.T) {
	t.Parallel()
	all, err := PackageLines(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if all["bot"] == 0 || all["engine"] == 0 {
		t.Fatalf("bot or engine not counted (%v): is the module root right?", all)
	}
	for dir, n := range all {
		switch {
		case n > MaxPackageLines && !overLimit[dir]:
			t.Errorf("package %s has %d non-test lines, over %d: move what it provides apart into packages named for it", dir, n, MaxPackageLines)
		case n <= MaxPackageLines && overLimit[dir]:
			t.Errorf("package %s has %d non-test lines, within the limit: take it off overLimit", dir, n)
		}
	}
	for dir := range overLimit {
		if _, ok := all[dir]; !ok {
			t.Errorf("overLimit names %s, which is not a package", dir)
		}
	}
}

// overLimit are the packages known to be over MaxPackageLines while they
// are being split; each must leave the list as soon as it is within it.
var overLimit = map[string]bool{}

// TestPackageLinesCountsLikeWc checks the counter on a tree of its own:
// lines as wc -l counts them, per directory, tests and testdata left out.
func TestPackageLinesCountsLikeWc(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"a/a.go":               "package a\n\nfunc A() {}\n",
		"a/b.go":               "package a\n// no newline at the end",
		"a/a_test.go":          strings.Repeat("\n", 100),
		"a/testdata/x.go":      strings.Repeat("\n", 100),
		"a/sub/s.go":           "package sub\n",
		".hidden/h.go":         strings.Repeat("\n", 100),
		"a/README.md":          strings.Repeat("\n", 100),
		"a/sub/testdata/y.txt": "x\n",
	}
	writeTree(t, root, files)
	got, err := PackageLines(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a": 4, "a/sub": 1}
	if len(got) != len(want) || got["a"] != want["a"] || got["a/sub"] != want["a/sub"] {
		t.Errorf("PackageLines = %v, want %v", got, want)
	}
}

// writeTree writes files (slash paths relative to root) into root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
