package archcheck

import (
	"path/filepath"
	"testing"
)

// TestNoInterfaceOverSixMethods holds the repository to the rule.
func TestNoInterfaceOverSixMethods(t *testing.T) {
	t.Parallel()
	all, err := Interfaces(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 10 {
		t.Fatalf("found only %d interfaces: is the module root right?", len(all))
	}
	for _, it := range all {
		if it.Methods > MaxInterfaceMethods {
			t.Errorf("interface %s has %d methods, over %d: split it into roles, each consumed where it is used", it.Name, it.Methods, MaxInterfaceMethods)
		}
	}
}

// TestInterfacesCountsEmbeddedMethods checks the counter on a module of
// its own: embedded interfaces, from the module and from the standard
// library, count; a method named twice counts once; tests do not count.
func TestInterfacesCountsEmbeddedMethods(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.24\n",
		"a/a.go": "package a\n\ntype Small interface{ A(); B() }\n",
		"b/b.go": `package b

import (
	"io"

	"example.com/m/a"
)

type Big interface {
	a.Small
	io.ReadWriteCloser
	Local
	C()
	Close() error
}

type Local interface{ D(); E() }
`,
		"b/b_test.go": "package b\n\ntype Huge interface{ A(); B(); C(); D(); E(); F(); G() }\n",
	}
	writeTree(t, root, files)
	got, err := Interfaces(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a.Small": 2, "b.Big": 8, "b.Local": 2}
	if len(got) != len(want) {
		t.Fatalf("Interfaces = %+v, want %v", got, want)
	}
	for _, it := range got {
		if want[it.Name] != it.Methods {
			t.Errorf("%s: %d methods, want %d", it.Name, it.Methods, want[it.Name])
		}
	}
}
