package fetch

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRef(t *testing.T) {
	t.Parallel()
	isRepo := func(p string) bool { return p == "/srv/repos/blueprints" }
	tests := []struct {
		arg     string
		want    Ref
		wantErr string
	}{
		{arg: "https://github.com/org/repo.git/pkgs/basens@v1", want: Ref{Repo: "https://github.com/org/repo", Dir: "/pkgs/basens", Version: "v1"}},
		{arg: "https://github.com/org/repo.git", want: Ref{Repo: "https://github.com/org/repo", Dir: "/"}},
		{arg: "https://github.com/org/repo.git@main", want: Ref{Repo: "https://github.com/org/repo", Dir: "/", Version: "main"}},
		{arg: "https://github.com/org/repo.git/basens@basens/v2", want: Ref{Repo: "https://github.com/org/repo", Dir: "/basens", Version: "basens/v2"}},
		{arg: "https://user@host.example/org/repo.git/a/b@feature/x", want: Ref{Repo: "https://user@host.example/org/repo", Dir: "/a/b", Version: "feature/x"}},
		{arg: "file:///tmp/bp.git/basens@v1", want: Ref{Repo: "file:///tmp/bp", Dir: "/basens", Version: "v1"}},
		{arg: "/tmp/bp.git/basens", want: Ref{Repo: "/tmp/bp", Dir: "/basens"}},
		{arg: "git@github.com:org/repo.git/x@v3", want: Ref{Repo: "git@github.com:org/repo", Dir: "/x", Version: "v3"}},
		{arg: "/srv/repos/blueprints/catalog/basens@v4", want: Ref{Repo: "/srv/repos/blueprints", Dir: "/catalog/basens", Version: "v4"}},
		{arg: "file:///srv/repos/blueprints/basens", want: Ref{Repo: "file:///srv/repos/blueprints", Dir: "/basens"}},
		{arg: "/srv/repos/blueprints", want: Ref{Repo: "/srv/repos/blueprints", Dir: "/"}},
		{arg: "/srv/nothing/here@v1", wantErr: "no git repository found"},
		{arg: "https://example.com/org/repo/pkg@v1", wantErr: "ambiguous"},
		{arg: "https://github.com/org/repo.git/pkg@", wantErr: "empty version"},
		{arg: "", wantErr: "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.arg, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRef(tc.arg, isRepo)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseRef(%q) error = %v, want containing %q", tc.arg, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRef(%q): %v", tc.arg, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseRef(%q) (-want +got):\n%s", tc.arg, diff)
			}
		})
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"https://github.com/org/repo.git/pkgs/basens@v1", "file:///tmp/x.git@main", "/a/b/c@v1", "git@h:o/r.git/p", "x.gitx/y@@z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		ref, err := ParseRef(arg, func(p string) bool { return p == "/a" })
		if err != nil {
			return
		}
		if !strings.HasPrefix(ref.Dir, "/") {
			t.Fatalf("Dir %q does not start with /", ref.Dir)
		}
		if strings.HasSuffix(ref.Repo, ".git") && strings.Contains(arg, ".git/") {
			// A repo that itself ends in .git.git is fine; only check no panic.
			_ = ref
		}
		if ref.Version != "" && !strings.Contains(arg, "@"+ref.Version) {
			t.Fatalf("version %q not in %q", ref.Version, arg)
		}
	})
}
