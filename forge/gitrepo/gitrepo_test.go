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

func TestParseRefName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ref  string
		want RefInfo
		ok   bool
	}{
		{"refs/tags/basens/v3", RefInfo{Package: "basens", Revision: 3, Lifecycle: Published}, true},
		{"refs/tags/catalog/namespace/basens/v12", RefInfo{Package: "catalog/namespace/basens", Revision: 12, Lifecycle: Published}, true},
		{"refs/heads/drafts/bucket/v1", RefInfo{Package: "bucket", Workspace: "v1", Lifecycle: Draft}, true},
		{"refs/heads/drafts/catalog/gcp/bucket/my-ws", RefInfo{Package: "catalog/gcp/bucket", Workspace: "my-ws", Lifecycle: Draft}, true},
		{"refs/heads/proposed/bucket/ws", RefInfo{Package: "bucket", Workspace: "ws", Lifecycle: Proposed}, true},
		{"refs/heads/deletionProposed/basens/v2", RefInfo{Package: "basens", Revision: 2, Lifecycle: DeletionProposed}, true},
		{"refs/tags/basens/1.0.0", RefInfo{}, false},
		{"refs/tags/basens/v01", RefInfo{}, false},
		{"refs/tags/v1", RefInfo{}, false},
		{"refs/heads/main", RefInfo{}, false},
		{"refs/heads/drafts/onlyone", RefInfo{}, false},
	}
	for _, tc := range tests {
		got, ok := ParseRefName(tc.ref)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("ParseRefName(%q) = %+v, %v; want %+v, %v", tc.ref, got, ok, tc.want, tc.ok)
		}
	}
	if TagName("a/b", 3) != "refs/tags/a/b/v3" || DraftBranch("a/b", "ws") != "refs/heads/drafts/a/b/ws" ||
		ProposedBranch("p", "w") != "refs/heads/proposed/p/w" || DeletionProposedBranch("p", 2) != "refs/heads/deletionProposed/p/v2" {
		t.Error("ref names do not follow Porch's layout")
	}
}

func TestTrailer(t *testing.T) {
	t.Parallel()
	tr, found, err := ParseTrailer("Approve blueprint/bp1/v1\n\nkpt:{\"package\":\"blueprint/bp1\",\"workspaceName\":\"v1\",\"revision\":\"v1\"}\n")
	if err != nil || !found || tr.Package != "blueprint/bp1" || tr.Revision != "v1" || tr.WorkspaceName != "v1" {
		t.Errorf("own-line trailer: %+v %v %v", tr, found, err)
	}
	tr, found, err = ParseTrailer(`Approve pkg-with-anno/v1 kpt:{"package":"pkg-with-anno","revision":"v1"}`)
	if err != nil || !found || tr.Package != "pkg-with-anno" {
		t.Errorf("subject trailer: %+v %v %v", tr, found, err)
	}
	if _, found, err = ParseTrailer("kpt:{invalid:annotation}\n"); !found || err == nil {
		t.Errorf("malformed trailer: found %v err %v", found, err)
	}
	if _, found, _ = ParseTrailer("manually add bp10"); found {
		t.Error("no trailer found one")
	}
	line, err := FormatTrailer(Trailer{Package: "basens", WorkspaceName: "ws", Revision: "v2", Task: []byte(`{"type":"edit"}`)})
	if err != nil || line != `kpt:{"package":"basens","workspaceName":"ws","revision":"v2","task":{"type":"edit"}}` {
		t.Errorf("FormatTrailer = %s, %v", line, err)
	}
}

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
