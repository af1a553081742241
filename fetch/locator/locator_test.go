package locator

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const dg = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Ref
		git     bool
		wantErr string
	}{
		{in: "oci://ghcr.io/org/blueprints//basens:v2", want: Ref{Repo: "oci://ghcr.io/org/blueprints", Dir: "/basens", Version: "v2"}},
		{in: "oci://127.0.0.1:5000/bp//team/basens@" + dg, want: Ref{Repo: "oci://127.0.0.1:5000/bp", Dir: "/team/basens", Version: dg}},
		{in: "oci://localhost:5000/bp/basens", want: Ref{Repo: "oci://localhost:5000/bp/basens", Dir: "/"}},
		{in: "oci://[::1]:5000/bp:v1.2.3", want: Ref{Repo: "oci://[::1]:5000/bp", Dir: "/", Version: "v1.2.3"}},
		{in: "oci://ghcr.io/org/bp//basens@v2", wantErr: "not a digest"},
		{in: "oci://ghcr.io", wantErr: "no repository"},
		{in: "oci://ghcr.io/Org/bp", wantErr: "lower-case"},
		{in: "oci://ghcr.io/org/bp//Base", wantErr: "package path"},
		{in: "oci://ghcr.io/org/bp:-bad", wantErr: "not a valid tag"},
		{in: "https://example.com/r/bp-1.0.tar.gz", want: Ref{Repo: "https://example.com/r/bp-1.0.tar.gz", Dir: "/"}},
		{in: "https://example.com/r/bp.tgz//pkgs/basens#sha256=" + strings.ToUpper(dg[7:]), want: Ref{Repo: "https://example.com/r/bp.tgz#sha256=" + dg[7:], Dir: "/pkgs/basens"}},
		{in: "https://example.com/dl/{version}/bp.zip//basens@v3", want: Ref{Repo: "https://example.com/dl/{version}/bp.zip", Dir: "/basens", Version: "v3"}},
		{in: "http://127.0.0.1:8080/bp.tar.gz?raw=1//basens", want: Ref{Repo: "http://127.0.0.1:8080/bp.tar.gz?raw=1", Dir: "/basens"}},
		{in: "https://example.com/bp.tar.gz@v1", wantErr: "no {version} placeholder"},
		{in: "https://example.com/{version}/bp.tar.gz@v1#sha256=" + dg[7:], wantErr: "cannot be combined"},
		{in: "https://example.com/bp.tar.gz#md5=abc", wantErr: "expected #sha256="},
		{in: "https://example.com/bp.tar.gz//../x", wantErr: "clean relative path"},
		{in: "https://example.com/bp.tar.gzip", git: true},
		{in: "https://github.com/org/repo.git/basens@v1", git: true},
		{in: "/srv/repos/bp", git: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, ok, err := Parse(tc.in)
			if tc.git {
				if ok || err != nil {
					t.Fatalf("Parse(%q) = %v, %v, %v; want a git reference (not ok)", tc.in, got, ok, err)
				}
				return
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || !ok {
				t.Fatalf("Parse(%q): %v (ok %v)", tc.in, err, ok)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("Parse(%q) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

func TestResourceIDRoundTrip(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"oci://ghcr.io/org/bp//basens:v2",
		"oci://ghcr.io/org/bp@" + dg,
		"https://example.com/bp.tgz//pkgs/basens#sha256=" + dg[7:],
		"https://example.com/{version}/bp.tgz//basens@v3",
		"https://example.com/bp.zip",
	} {
		ref, _, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := WithVersion(ResourceID(ref.Repo, ref.Dir), ref.Version); got != in {
			t.Errorf("ResourceID round trip of %q = %q", in, got)
		}
	}
}

func TestDefaultName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"oci://ghcr.io/org/bp//team/basens:v2":                      "basens",
		"oci://ghcr.io/org/basens:v2":                               "basens",
		"https://example.com/r/bp-1.0.tar.gz?x=1":                   "bp-1.0",
		"https://example.com/r/bp-{version}.zip@v2":                 "bp-v2",
		"https://example.com/r/bp.tgz//catalog/ns#sha256=" + dg[7:]: "ns",
	} {
		ref, _, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := DefaultName(ref); got != want {
			t.Errorf("DefaultName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLatestVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tags []string
		want string
	}{
		{[]string{"v1", "v10", "v9", "latest", "main"}, "v10"},
		{[]string{"1.2.0", "v1.10.0", "v1.9.3"}, "v1.10.0"},
		{[]string{"v2", "v3.0.0-rc.1", "v2.1.0"}, "v2.1.0"},
		{[]string{"v3.0.0-rc.1", "v3.0.0-rc.2"}, "v3.0.0-rc.2"},
		{[]string{"v2", "v2.0.0"}, "v2.0.0"},
		{[]string{"latest", "stable"}, ""},
	}
	for _, tc := range tests {
		got, ok := LatestVersion(tc.tags)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("LatestVersion(%v) = %q, %v; want %q", tc.tags, got, ok, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"oci://h/r//p:v1", "https://h/a.tar.gz//p@v#sha256=00", "oci://[::1]:1/a@sha256:", "https://h/{version}.zip?q=1//x@1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref, ok, err := Parse(s)
		if !ok || err != nil {
			return
		}
		if !strings.HasPrefix(ref.Dir, "/") {
			t.Fatalf("Parse(%q).Dir = %q, want a leading /", s, ref.Dir)
		}
		again, _, err := Parse(WithVersion(ResourceID(ref.Repo, ref.Dir), ref.Version))
		if err != nil || again != ref {
			t.Fatalf("Parse(%q) = %+v does not survive formatting: %+v, %v", s, ref, again, err)
		}
	})
}
