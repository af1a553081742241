package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kptbot/kptbot/fetch"
)

func TestPackageName(t *testing.T) {
	t.Parallel()
	cwd, _ := os.Getwd()
	for _, tc := range []struct{ root, sub, want string }{
		{".", ".", filepath.Base(cwd)},
		{".", "db", filepath.Base(cwd) + "/db"},
		{"/work/team-a", ".", "team-a"},
		{"/work/team-a/", "db/cache", "team-a/db/cache"},
		{"sites/team-b", "", "team-b"},
	} {
		if got := PackageName(tc.root, tc.sub); got != tc.want {
			t.Errorf("PackageName(%q, %q) = %q, want %q", tc.root, tc.sub, got, tc.want)
		}
	}
}

func TestSplitPackageArg(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ arg, dir, version string }{
		{"", ".", ""},
		{"@v2", ".", "v2"},
		{"team-a", "team-a", ""},
		{"team-a@main", "team-a", "main"},
		{"a@b/pkg@v3", "a@b/pkg", "v3"},
	} {
		if dir, version := SplitPackageArg(tc.arg); dir != tc.dir || version != tc.version {
			t.Errorf("SplitPackageArg(%q) = %q, %q; want %q, %q", tc.arg, dir, version, tc.dir, tc.version)
		}
	}
}

func TestDestination(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	git := fetch.Ref{Repo: "https://example.com/blueprints.git", Dir: "/team/basens"}
	for _, tc := range []struct {
		dest string
		ref  fetch.Ref
		want string
	}{
		{filepath.Join(root, "new"), git, filepath.Join(root, "new")},
		{root, git, filepath.Join(root, "basens")},
		{root, fetch.Ref{Repo: "https://example.com/blueprints.git/", Dir: "/"}, filepath.Join(root, "blueprints")},
		{root, fetch.Ref{Repo: "oci://registry.example/pkgs/basens"}, filepath.Join(root, "basens")},
		{root, fetch.Ref{Repo: "https://example.com/releases/app-1.2.tar.gz"}, filepath.Join(root, "app-1.2")},
	} {
		got, err := Destination(tc.dest, tc.ref)
		if err != nil || got != tc.want {
			t.Errorf("Destination(%q, %+v) = %q, %v; want %q", tc.dest, tc.ref, got, err, tc.want)
		}
	}
	if _, err := Destination(file, git); err == nil {
		t.Errorf("Destination(a file) succeeded; want 'exists and is not a directory'")
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    FetchedPackage
		want string
	}{
		{FetchedPackage{Repo: "https://e.com/bp.git", Dir: "/ns", Resolved: fetch.Resolved{Ref: "ns/v1", Commit: "abc"}}, "https://e.com/bp.git/ns at ns/v1 (abc)"},
		{FetchedPackage{Repo: "https://e.com/bp.git", Dir: "/ns", Resolved: fetch.Resolved{Ref: "abc", Commit: "abc"}}, "https://e.com/bp.git/ns at abc"},
		{FetchedPackage{Repo: "https://e.com/bp.git", Dir: "/ns", Resolved: fetch.Resolved{Commit: "abc"}}, "https://e.com/bp.git/ns at abc"},
	} {
		if got := tc.p.Describe(); got != tc.want {
			t.Errorf("Describe(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
