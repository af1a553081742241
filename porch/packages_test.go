package porch

import (
	"strings"
	"testing"
)

func TestPackagesIn(t *testing.T) {
	files := map[string][]byte{
		"Kptfile": nil, "README.md": nil,
		"pkgs/a/Kptfile": nil, "pkgs/a/cm.yaml": nil, "pkgs/a/sub/Kptfile": nil,
		"pkgs/b/Kptfile": nil, "other/c/Kptfile": nil, "pkgsx/d/Kptfile": nil,
		// "pkgs/a-b" sorts between "pkgs/a" and "pkgs/a/sub".
		"pkgs/a-b/Kptfile": nil,
	}
	for _, tc := range []struct{ root, want string }{
		{"", "other/c,pkgs/a,pkgs/a-b,pkgs/b,pkgsx/d"},
		{"pkgs", "pkgs/a,pkgs/a-b,pkgs/b"},
		{"/pkgs/", "pkgs/a,pkgs/a-b,pkgs/b"},
		{"pkgs/a", "pkgs/a"},
	} {
		if got := strings.Join(PackagesIn(tc.root, files), ","); got != tc.want {
			t.Errorf("PackagesIn(%q) = %s, want %s", tc.root, got, tc.want)
		}
	}
	pkgs := PackagesIn("", files)
	if PackageOf(pkgs, "pkgs/a/sub/x.yaml") != "pkgs/a" || PackageOf(pkgs, "pkgs/ab/x") != "" || PackageOf(pkgs, "README.md") != "" {
		t.Error("PackageOf: a file belongs to the package directory that holds it, and only that")
	}
}

func TestPackageNames(t *testing.T) {
	for _, tc := range []struct{ root, dir, name string }{
		{"", "pkgs/a", "pkgs/a"},
		{"pkgs", "pkgs/a", "a"},
		{"/pkgs/", "pkgs/a/b", "a/b"},
	} {
		if got := PackagePath(tc.root, tc.dir); got != tc.name {
			t.Errorf("PackagePath(%q, %q) = %q, want %q", tc.root, tc.dir, got, tc.name)
		}
		if got := PackageDir(tc.root, tc.name); got != tc.dir {
			t.Errorf("PackageDir(%q, %q) = %q, want %q", tc.root, tc.name, got, tc.dir)
		}
	}
}
