package main

import (
	"path/filepath"
	"testing"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/golden"
)

// TestRenderInputOrderEndToEnd: `kptbot fn render` gives a pipeline its
// package's own resources first, then each subpackage's output, as kpt
// v1.0.0-beta.67 does (beta.61 put the subpackages first). The package and
// its expected output are the render golden case input-order, whose
// starlark step annotates each ConfigMap with its position in the input.
func TestRenderInputOrderEndToEnd(t *testing.T) {
	t.Parallel()
	caseDir := filepath.Join("..", "..", "engine", "render", "testdata", "render", "input-order")
	in, err := kptpkg.ReadTree(filepath.Join(caseDir, "in"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := kptpkg.ReadTree(filepath.Join(caseDir, "want"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(t.TempDir(), "app")
	if err := in.Write(pkg); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := kptbot(t, "fn", "render", pkg); code != 0 {
		t.Fatalf("fn render: exit %d\n%s", code, stderr)
	}
	got, err := kptpkg.ReadTree(pkg)
	if err != nil {
		t.Fatal(err)
	}
	golden.SameTrees(t, "fn render", want, got)
}
