package gitrepo

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

// porchRepo unpacks one of Porch's test repositories.
func porchRepo(t *testing.T, name string) *fetch.Repo {
	t.Helper()
	dir := t.TempDir()
	tarball := filepath.Join(gitfixture.Root(), "testdata", "porch", name+".tar")
	if out, err := exec.Command("tar", "-xf", tarball, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("unpacking %s: %v\n%s", name, err, out)
	}
	r, err := fetch.Open(context.Background(), filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func summary(l *Listing) []string {
	var out []string
	for _, p := range l.Packages {
		out = append(out, strings.TrimSpace(strings.Join([]string{p.Name, "latest=" + itoa(p.Latest), "drafts=" + strings.Join(p.Drafts, ","), "proposed=" + strings.Join(p.Proposals, ",")}, " ")))
	}
	return out
}

func itoa(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("v%d", n)
}

func TestListPorchRepositories(t *testing.T) {
	t.Parallel()
	tests := []struct {
		repo     string
		want     []string
		warnings int
	}{
		{"drafts-repository", []string{
			"basens latest=v2 drafts= proposed=",
			"bucket latest=- drafts=v1 proposed=",
			"empty latest=v1 drafts= proposed=",
			"istions latest=v2 drafts= proposed=",
			"none latest=- drafts=v1 proposed=",
			"pkg-with-history latest=- drafts=v1 proposed=",
		}, 0},
		{"nested-repository-with-invalid-kpt-annotation", []string{
			"blueprint/bp1 latest=v3 drafts= proposed=",
			"blueprint/bp2 latest=v2 drafts= proposed=",
			"blueprint2/bp10 latest=v1 drafts= proposed=",
		}, 1},
		{"empty-repository", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.repo, func(t *testing.T) {
			t.Parallel()
			l, err := List(context.Background(), porchRepo(t, tc.repo), "main")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summary(l)); diff != "" {
				t.Errorf("packages (-want +got):\n%s", diff)
			}
			if len(l.Warnings) != tc.warnings {
				t.Errorf("warnings = %q, want %d", l.Warnings, tc.warnings)
			}
			for _, w := range l.Warnings {
				if !strings.Contains(w, "malformed kpt trailer") {
					t.Errorf("warning %q does not name the malformed trailer", w)
				}
			}
		})
	}
}
