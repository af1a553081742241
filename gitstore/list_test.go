package gitstore

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
		out = append(out, strings.TrimSpace(strings.Join([]string{p.Name, "latest=" + latestName(p), "drafts=" + strings.Join(p.Drafts, ","), "proposed=" + strings.Join(p.Proposals, ",")}, " ")))
	}
	return out
}

func latestName(p Package) string {
	if !p.Published {
		return "-"
	}
	return fmt.Sprintf("v%d", p.Latest)
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

// TestListDiscovery: a directory with a Kptfile is a package and nothing
// below it is (Porch's discovery stops at the first Kptfile); a v0 tag is
// a published revision.
func TestListDiscovery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bare := filepath.Join(dir, "blueprints.git")
	gitfixture.Git(t, dir, "init", "-q", "--bare", "-b", "main", bare)
	wt := gitfixture.WorkTree(t, bare)
	kf := func(name string) string {
		return "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + name + "\n"
	}
	gitfixture.WriteFiles(t, wt, map[string]string{
		"basens/Kptfile":            kf("basens"),
		"basens/quota/Kptfile":      kf("quota"),
		"basens/quota/deep/Kptfile": kf("deep"),
		"catalog/app/Kptfile":       kf("app"),
		"catalog/app/db/Kptfile":    kf("db"),
		"catalog/README.md":         "not a package\n",
	})
	gitfixture.CommitAndTag(t, wt, "v0", "basens/v0")
	gitfixture.Git(t, wt, "push", "-q", "origin", "HEAD:main", "--tags")
	repo, err := fetch.Open(context.Background(), bare)
	if err != nil {
		t.Fatal(err)
	}
	l, err := List(context.Background(), repo, "main")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"basens latest=v0 drafts= proposed=", "catalog/app latest=- drafts= proposed="}
	if diff := cmp.Diff(want, summary(l)); diff != "" {
		t.Errorf("packages (-want +got):\n%s", diff)
	}
}
