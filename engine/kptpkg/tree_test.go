package kptpkg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSyncDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	have := Tree{
		"Kptfile":         []byte("old kptfile\n"),
		"script.sh":       []byte("echo old\n"),
		"same.yaml":       []byte("same\n"),
		"gone/only.yaml":  []byte("removed with its directory\n"),
		"kept/gone.yaml":  []byte("removed\n"),
		"kept/stays.yaml": []byte("stays\n"),
	}
	for p, b := range have {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "script.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	want := Tree{
		"Kptfile":            []byte("new kptfile\n"),
		"script.sh":          []byte("echo new\n"),
		"same.yaml":          []byte("same\n"),
		"kept/stays.yaml":    []byte("stays\n"),
		"new/deep/file.yaml": []byte("added\n"),
		"added.yaml":         []byte("added\n"),
	}
	for i := 0; i < 20; i++ { // more files than workers
		want[filepath.ToSlash(filepath.Join("many", string(rune('a'+i))+".yaml"))] = []byte(strings.Repeat("x", i) + "\n")
	}
	if err := SyncDir(dir, have, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) {
		t.Errorf("directory holds %v, want %v", got.Paths(), want.Paths())
	}
	for p, mode := range map[string]os.FileMode{"script.sh": 0o750, "Kptfile": 0o644, "added.yaml": 0o644, "new/deep/file.yaml": 0o644} {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), mode)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "gone")); !os.IsNotExist(err) {
		t.Errorf("the emptied directory gone/ is left behind (%v)", err)
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".kptbot-") {
			t.Errorf("temporary file %s left behind", p)
		}
		return err
	})
}

func TestSyncDirNamesTheFileItCannotWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// a file where a directory must go: the write under it fails
	if err := os.WriteFile(filepath.Join(dir, "blocked"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := Tree{"a.yaml": []byte("a\n"), "blocked/b.yaml": []byte("b\n")}
	err := SyncDir(dir, Tree{"blocked": []byte("x")}, want)
	if err == nil || !strings.Contains(err.Error(), "blocked") {
		t.Fatalf("SyncDir = %v, want an error naming blocked", err)
	}
}

func TestKptfilesDecodesEachContentOnce(t *testing.T) {
	t.Parallel()
	var kfs Kptfiles
	b := []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n")
	first, err := kfs.Decode("a/Kptfile", b)
	if err != nil {
		t.Fatal(err)
	}
	again, err := kfs.Decode("b/Kptfile", append([]byte(nil), b...))
	if err != nil {
		t.Fatal(err)
	}
	if first != again || first.Name != "app" {
		t.Errorf("the same content decoded twice (%p, %p) or wrongly (%q)", first, again, first.Name)
	}
	other, err := kfs.Decode("c/Kptfile", []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: other\n"))
	if err != nil || other.Name != "other" {
		t.Errorf("other content: %v, %v", other, err)
	}
	bad := []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\nbogus: 1\n")
	for _, name := range []string{"x/Kptfile", "y/Kptfile"} {
		if _, err := kfs.Decode(name, bad); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Decode(%s) = %v, want an error naming it", name, err)
		}
	}
	var none *Kptfiles
	if kf, err := none.Decode("Kptfile", b); err != nil || kf.Name != "app" {
		t.Errorf("nil Kptfiles: %v, %v", kf, err)
	}
}
