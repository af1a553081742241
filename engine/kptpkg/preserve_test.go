package kptpkg_test

import (
	"github.com/kptbot/kptbot/engine/internal/enginetest"
	"hash/maphash"
	"math/rand"
	"testing"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// TestSameMeaningMatchesRead requires the streaming, stop-at-the-first-
// difference sameMeaning to agree with comparing every document as kio's
// ByteReader reads it, on random edits of generated files and on streams
// with comments-only, null, empty and broken documents, CRLF line ends,
// separators with comments and single-document Lists.
func TestSameMeaningMatchesRead(t *testing.T) {
	t.Parallel()
	files := []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# only a comment\n---\nnull\n---\n\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n--- # c\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
		"apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n---\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: b\r\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n---\na: [\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\na: [\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
		"apiVersion: v1\nkind: List\nmetadata:\n  name: l\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n---x\n",
		"- a\n- b\n---\n- a\n- b\n",
	}
	cm := func(name, data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n" + data
	}
	pairs := [][2]string{
		// kio unwraps a single-document List into its items.
		{"apiVersion: v1\nkind: List\nmetadata:\n  name: l\nitems:\n- " + "apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n", cm("a", "")},
		// Null and comment-only documents are not resources.
		{cm("a", "") + "---\nnull\n---\n# c\n---\n" + cm("b", ""), cm("a", "") + "---\n" + cm("b", "")},
		// The newline the split takes from a document before "---" is put back.
		{cm("a", "data:\n  a: |\n    x\n") + "---\n" + cm("b", ""), cm("a", "data:\n  a: x\n") + "---\n" + cm("b", "")},
	}
	for _, p := range pairs {
		for _, ab := range [][2]string{p, {p[1], p[0]}} {
			want := kptpkg.SameMeaningRead(maphash.MakeSeed(), []byte(ab[0]), []byte(ab[1]))
			if got := kptpkg.SameMeaning([]byte(ab[0]), []byte(ab[1])); got != want {
				t.Fatalf("sameMeaning = %v, reading every document says %v:\n%s\n=====\n%s", got, want, ab[0], ab[1])
			}
		}
	}
	r := rand.New(rand.NewSource(3))
	for round := 0; round < 40; round++ {
		pkg := enginetest.GenPackage(30, 1)
		for _, tag := range []string{"x", "y"} {
			for p, b := range enginetest.Mutate(pkg, r, tag) {
				if p != kptpkg.KptfileName {
					files = append(files, string(b))
				}
			}
		}
		for _, b := range pkg {
			files = append(files, string(b))
		}
	}
	compared, same := 0, 0
	for i := 0; i < 4000; i++ {
		a, b := files[r.Intn(len(files))], files[r.Intn(len(files))]
		if r.Intn(3) == 0 {
			b = a // the same stream, reformatted below half the time
			if r.Intn(2) == 0 {
				b = "# reformatted\n" + a
			}
		}
		want := kptpkg.SameMeaningRead(maphash.MakeSeed(), []byte(a), []byte(b))
		if got := kptpkg.SameMeaning([]byte(a), []byte(b)); got != want {
			t.Fatalf("sameMeaning = %v, reading every document says %v:\n%s\n=====\n%s", got, want, a, b)
		}
		compared++
		if want {
			same++
		}
	}
	if same == 0 || same == compared {
		t.Fatalf("%d of %d pairs meant the same: the test compares nothing interesting", same, compared)
	}
}
