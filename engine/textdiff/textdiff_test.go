package textdiff

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// numbered returns the lines "1\n" to "n\n", with the given lines (1-based)
// replaced by replacement text.
func numbered(n int, replace map[int]string) []byte {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		if r, ok := replace[i]; ok {
			sb.WriteString(r + "\n")
			continue
		}
		sb.WriteString(strconv.Itoa(i) + "\n")
	}
	return []byte(sb.String())
}

// unifiedCases are checked against hand-written GNU diff output here, and
// against the diff binary itself in TestMatchesGNUDiff.
var unifiedCases = []struct {
	name    string
	a, b    string
	context int
	want    string
}{
	{
		name: "equal",
		a:    "a\nb\n", b: "a\nb\n", context: 3,
		want: "",
	},
	{
		name: "both empty",
		a:    "", b: "", context: 3,
		want: "",
	},
	{
		name: "from empty",
		a:    "", b: "a\nb\n", context: 3,
		want: "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n",
	},
	{
		name: "to empty, one-line range has no count",
		a:    "a\n", b: "", context: 3,
		want: "--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-a\n",
	},
	{
		name: "change in the middle",
		a:    string(numbered(10, nil)), b: string(numbered(10, map[int]string{5: "five"})), context: 3,
		want: "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n",
	},
	{
		name: "newline added at end",
		a:    "a\nb", b: "a\nb\n", context: 3,
		want: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
	},
	{
		name: "neither side ends with a newline",
		a:    "a", b: "b", context: 3,
		want: "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
	},
	{
		name: "context line without newline",
		a:    "a\nb", b: "x\nb", context: 3,
		want: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+x\n b\n\\ No newline at end of file\n",
	},
	{
		name: "insertion without context starts after the line before",
		a:    "a\nc\n", b: "a\nb\nc\n", context: 0,
		want: "--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+b\n",
	},
	{
		name: "negative context is zero",
		a:    "a\nc\n", b: "a\nb\nc\n", context: -1,
		want: "--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+b\n",
	},
	{
		name: "changes 6 lines apart share a hunk",
		a:    string(numbered(20, nil)), b: string(numbered(20, map[int]string{3: "three", 10: "ten"})), context: 3,
		want: "--- a/f\n+++ b/f\n@@ -1,13 +1,13 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n 7\n 8\n 9\n-10\n+ten\n 11\n 12\n 13\n",
	},
	{
		name: "changes 7 lines apart get separate hunks",
		a:    string(numbered(20, nil)), b: string(numbered(20, map[int]string{3: "three", 11: "eleven"})), context: 3,
		want: "--- a/f\n+++ b/f\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n@@ -8,7 +8,7 @@\n 8\n 9\n 10\n-11\n+eleven\n 12\n 13\n 14\n",
	},
	{
		name: "deletions print before insertions",
		a:    "a\nb\nc\nd\n", b: "a\nB\nC\nd\n", context: 1,
		want: "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n a\n-b\n-c\n+B\n+C\n d\n",
	},
	{
		name: "carriage returns are kept",
		a:    "a\r\nb\r\n", b: "a\r\nc\r\n", context: 3,
		want: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n",
	},
	{
		name: "duplicate line removed: the later copy goes",
		a:    "x\ny\nx\ny\n", b: "x\ny\n", context: 0,
		want: "--- a/f\n+++ b/f\n@@ -3,2 +2,0 @@\n-x\n-y\n",
	},
	{
		name: "inserted block slides to the natural boundary",
		a:    "{\n  a;\n}\n{\n  b;\n}\n", b: "{\n  a;\n}\n{\n  x;\n}\n{\n  b;\n}\n", context: 0,
		want: "--- a/f\n+++ b/f\n@@ -4,0 +5,3 @@\n+  x;\n+}\n+{\n",
	},
	{
		name: "binary",
		a:    "x\x00y", b: "x\x00z", context: 3,
		want: "Binary files a/f and b/f differ\n",
	},
	{
		name: "binary but equal",
		a:    "x\x00y", b: "x\x00y", context: 3,
		want: "",
	},
	{
		name: "text versus binary",
		a:    "x\n", b: "\x00", context: 3,
		want: "Binary files a/f and b/f differ\n",
	},
}

func TestUnified(t *testing.T) {
	t.Parallel()
	for _, tc := range unifiedCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Unified("a/f", "b/f", []byte(tc.a), []byte(tc.b), tc.context)
			if got != tc.want {
				t.Errorf("Unified(%q, %q, %d):\ngot:\n%s\nwant:\n%s", tc.a, tc.b, tc.context, got, tc.want)
			}
		})
	}
}

func TestUnifiedLargeContextShowsWholeFile(t *testing.T) {
	t.Parallel()
	a := numbered(5, nil)
	b := numbered(5, map[int]string{3: "three"})
	want := "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n 1\n 2\n-3\n+three\n 4\n 5\n"
	for _, context := range []int{5, 100, math.MaxInt} {
		if got := Unified("a/f", "b/f", a, b, context); got != want {
			t.Errorf("context %d: got:\n%s\nwant:\n%s", context, got, want)
		}
	}
}

func TestTree(t *testing.T) {
	t.Parallel()
	a := map[string][]byte{
		"Kptfile":          []byte("kind: Kptfile\nname: old\n"),
		"same.yaml":        []byte("a: 1\n"),
		"gone.yaml":        []byte("x: 1\n"),
		"empty-gone":       nil,
		"sub/deploy.yaml":  []byte("replicas: 1\n"),
		"sub/binary.bin":   []byte("\x00\x01"),
		"sub/same-bin.bin": []byte("\x00\x02"),
	}
	b := map[string][]byte{
		"Kptfile":          []byte("kind: Kptfile\nname: new\n"),
		"same.yaml":        []byte("a: 1\n"),
		"new.yaml":         []byte("y: 2\n"),
		"empty-new":        {},
		"sub/deploy.yaml":  []byte("replicas: 3\n"),
		"sub/binary.bin":   []byte("\x00\x03"),
		"sub/same-bin.bin": []byte("\x00\x02"),
	}
	got, sum := Tree("a/", "b", a, b, 3)
	want := "" +
		"diff --git a/Kptfile b/Kptfile\n" +
		"--- a/Kptfile\n" +
		"+++ b/Kptfile\n" +
		"@@ -1,2 +1,2 @@\n" +
		" kind: Kptfile\n" +
		"-name: old\n" +
		"+name: new\n" +
		"diff --git a/empty-gone b/empty-gone\n" +
		"--- a/empty-gone\n" +
		"+++ /dev/null\n" +
		"diff --git a/empty-new b/empty-new\n" +
		"--- /dev/null\n" +
		"+++ b/empty-new\n" +
		"diff --git a/gone.yaml b/gone.yaml\n" +
		"--- a/gone.yaml\n" +
		"+++ /dev/null\n" +
		"@@ -1 +0,0 @@\n" +
		"-x: 1\n" +
		"diff --git a/new.yaml b/new.yaml\n" +
		"--- /dev/null\n" +
		"+++ b/new.yaml\n" +
		"@@ -0,0 +1 @@\n" +
		"+y: 2\n" +
		"diff --git a/sub/binary.bin b/sub/binary.bin\n" +
		"Binary files a/sub/binary.bin and b/sub/binary.bin differ\n" +
		"diff --git a/sub/deploy.yaml b/sub/deploy.yaml\n" +
		"--- a/sub/deploy.yaml\n" +
		"+++ b/sub/deploy.yaml\n" +
		"@@ -1 +1 @@\n" +
		"-replicas: 1\n" +
		"+replicas: 3\n"
	if got != want {
		t.Errorf("Tree text:\ngot:\n%s\nwant:\n%s", got, want)
	}
	wantSum := Summary{
		Added:    []string{"empty-new", "new.yaml"},
		Removed:  []string{"empty-gone", "gone.yaml"},
		Modified: []string{"Kptfile", "sub/binary.bin", "sub/deploy.yaml"},
	}
	if !reflect.DeepEqual(sum, wantSum) {
		t.Errorf("Tree summary = %+v, want %+v", sum, wantSum)
	}
	if sum.Empty() {
		t.Error("Summary.Empty() = true for a non-empty summary")
	}
}

func TestTreeBinaryAdded(t *testing.T) {
	t.Parallel()
	got, sum := Tree("a/", "b/", nil, map[string][]byte{"x.bin": []byte("\x00")}, 3)
	want := "diff --git a/x.bin b/x.bin\nBinary files /dev/null and b/x.bin differ\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if !reflect.DeepEqual(sum.Added, []string{"x.bin"}) {
		t.Errorf("Added = %v", sum.Added)
	}
}

func TestTreeIdentical(t *testing.T) {
	t.Parallel()
	tree := map[string][]byte{"a.yaml": []byte("a\n"), "b/c.yaml": []byte("c\n")}
	got, sum := Tree("a/", "b/", tree, tree, 3)
	if got != "" || !sum.Empty() {
		t.Errorf("Tree of identical trees = %q, %+v; want nothing", got, sum)
	}
	got, sum = Tree("a/", "b/", nil, nil, 3)
	if got != "" || !sum.Empty() {
		t.Errorf("Tree of empty trees = %q, %+v; want nothing", got, sum)
	}
}

func TestTreeBarePrefixes(t *testing.T) {
	t.Parallel()
	got, _ := Tree("", "", map[string][]byte{"f": []byte("1\n")}, map[string][]byte{"f": []byte("2\n")}, 3)
	want := "diff --git f f\n--- f\n+++ f\n@@ -1 +1 @@\n-1\n+2\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestSplitLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{"\n"}},
		{"a", []string{"a"}},
		{"a\nb", []string{"a\n", "b"}},
		{"a\n\nb\n", []string{"a\n", "\n", "b\n"}},
	} {
		if got := splitLines([]byte(tc.in)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitLines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
