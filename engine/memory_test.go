package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/golden"
)

// GetTree and UpdateTree are checked against Get and Update on every
// update golden case (update_test.go); these are the cases of their own.

func TestInitTreeMatchesInit(t *testing.T) {
	opts := InitOptions{Description: "a blueprint", Keywords: []string{"a", "b"}, Site: "https://example.com"}
	dir := filepath.Join(t.TempDir(), "blueprint")
	if _, err := Init(dir, opts); err != nil {
		t.Fatal(err)
	}
	want, err := kptpkg.ReadTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := InitTree("blueprint", opts)
	if err != nil {
		t.Fatal(err)
	}
	golden.SameTrees(t, "InitTree against Init", want, got)
	if !strings.Contains(string(got[kptpkg.KptfileName]), "name: blueprint") {
		t.Errorf("the Kptfile is not named after the package:\n%s", got[kptpkg.KptfileName])
	}
}

func TestInMemoryOperationsRejectBadInput(t *testing.T) {
	ctx := context.Background()
	f := treeFetcher{}
	for _, name := range []string{"", ".", "..", "a/b", "/abs"} {
		if _, _, err := GetTree(ctx, f, name, GetOptions{Repo: "r", Dir: "/p"}); err == nil || !strings.Contains(err.Error(), "one path element") {
			t.Errorf("GetTree(%q): error %v, want one naming the package name", name, err)
		}
		if _, err := InitTree(name, InitOptions{}); err == nil || !strings.Contains(err.Error(), "one path element") {
			t.Errorf("InitTree(%q): error %v, want one naming the package name", name, err)
		}
	}
	_, _, err := UpdateTree(ctx, f, "pkg", kptpkg.Tree{"cm.yaml": []byte("kind: ConfigMap\n")}, UpdateOptions{})
	if err == nil || !strings.Contains(err.Error(), "updating pkg: no Kptfile") {
		t.Errorf("UpdateTree without a Kptfile: error %v, want one saying so", err)
	}
	_, _, err = UpdateTree(ctx, f, "pkg", kptpkg.Tree{kptpkg.KptfileName: []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n")}, UpdateOptions{})
	if err == nil || !strings.Contains(err.Error(), "updating pkg: the Kptfile has no upstream") {
		t.Errorf("UpdateTree without an upstream: error %v, want one saying so", err)
	}
}
