package gitstore

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kptbot/kptbot/internal/gitfixture"
)

func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	bare := filepath.Join(dir, "deploy.git")
	gitfixture.Git(t, dir, "init", "-q", "--bare", "-b", "main", bare)
	wt := gitfixture.WorkTree(t, bare)
	gitfixture.WriteFiles(t, wt, map[string]string{"README.md": "deployment repo\n"})
	gitfixture.CommitAndTag(t, wt, "initial", "")
	s, err := OpenStore(context.Background(), bare, "main")
	if err != nil {
		t.Fatal(err)
	}
	s.Now = func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	return s, bare
}

var nsPackage = map[string][]byte{
	"Kptfile":        []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ns\n"),
	"namespace.yaml": []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n"),
	"sub/cm.yaml":    []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"),
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	s, bare := newStore(t)
	ctx := context.Background()
	if _, err := s.CreateDraft(ctx, "teams/ns", "v1", nsPackage, []byte(`{"type":"init"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateDraft(ctx, "teams/ns", "v1", nsPackage, nil); !errors.Is(err, ErrConflict) {
		t.Errorf("second draft with the same workspace: %v, want ErrConflict", err)
	}
	if _, err := s.Approve(ctx, "teams/ns", "v1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("approving a draft that was not proposed: %v", err)
	}
	if err := s.Propose(ctx, "teams/ns", "v1"); err != nil {
		t.Fatal(err)
	}
	n, err := s.Approve(ctx, "teams/ns", "v1")
	if err != nil || n != 1 {
		t.Fatalf("Approve = %d, %v", n, err)
	}
	// A second revision from a new workspace.
	edited := map[string][]byte{}
	for k, v := range nsPackage {
		edited[k] = v
	}
	edited["namespace.yaml"] = []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-b\n")
	delete(edited, "sub/cm.yaml")
	if _, err := s.CreateDraft(ctx, "teams/ns", "edit-2", nsPackage, []byte(`{"type":"edit"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateDraft(ctx, "teams/ns", "edit-2", edited, []byte(`{"type":"patch"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Propose(ctx, "teams/ns", "edit-2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reject(ctx, "teams/ns", "edit-2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Propose(ctx, "teams/ns", "edit-2"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Approve(ctx, "teams/ns", "edit-2"); err != nil || n != 2 {
		t.Fatalf("second Approve = %d, %v", n, err)
	}

	// git itself agrees the objects are sound, and sees Porch's layout.
	gitfixture.Git(t, bare, "fsck", "--strict")
	refs := gitfixture.Git(t, bare, "for-each-ref", "--format=%(refname)")
	if refs != "refs/heads/main\nrefs/tags/teams/ns/v1\nrefs/tags/teams/ns/v2" {
		t.Errorf("refs:\n%s", refs)
	}
	msg := gitfixture.Git(t, bare, "log", "-1", "--format=%B", "teams/ns/v2")
	if !strings.HasPrefix(msg, "Approving package revision teams/ns/2") || !strings.Contains(msg, `kpt:{"package":"teams/ns","workspaceName":"edit-2","revision":"v2"}`) {
		t.Errorf("approval commit message:\n%s", msg)
	}
	files := gitfixture.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
	if files != "README.md\nteams/ns/Kptfile\nteams/ns/namespace.yaml" {
		t.Errorf("main tree:\n%s", files)
	}
	if got := gitfixture.Git(t, bare, "show", "main:teams/ns/namespace.yaml"); !strings.Contains(got, "team-b") {
		t.Errorf("main has %s", got)
	}
	l, err := List(ctx, s.Repo(), "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Packages) != 1 || l.Packages[0].Latest != 2 || len(l.Warnings) != 0 {
		t.Errorf("List = %+v", l)
	}

	// Deletion goes through deletionProposed, as in Porch.
	if err := s.DeletePublished(ctx, "teams/ns", 2); err == nil {
		t.Error("deleting without proposing the deletion succeeded")
	}
	if err := s.ProposeDelete(ctx, "teams/ns", 2); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePublished(ctx, "teams/ns", 2); err != nil {
		t.Fatal(err)
	}
	if files := gitfixture.Git(t, bare, "ls-tree", "-r", "--name-only", "main"); files != "README.md" {
		t.Errorf("after deleting the latest revision, main has:\n%s", files)
	}
	gitfixture.Git(t, bare, "fsck", "--strict")
}

// TestApproveRace: two writers approving at once publish exactly one
// revision; the loser gets ErrConflict or ErrNotFound and changes nothing.
func TestApproveRace(t *testing.T) {
	t.Parallel()
	s1, bare := newStore(t)
	ctx := context.Background()
	s2, err := OpenStore(ctx, bare, "main")
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{"a", "b"} {
		if _, err := s1.CreateDraft(ctx, "ns", ws, nsPackage, nil); err != nil {
			t.Fatal(err)
		}
		if err := s1.Propose(ctx, "ns", ws); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range []*Store{s1, s2} {
		wg.Add(1)
		go func(i int, s *Store) {
			defer wg.Done()
			_, errs[i] = s.Approve(ctx, "ns", []string{"a", "b"}[i])
		}(i, s)
	}
	wg.Wait()
	tags := gitfixture.Git(t, bare, "tag", "-l")
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if !errors.Is(err, ErrConflict) {
			t.Errorf("losing approval failed with %v, want ErrConflict", err)
		}
	}
	// Both may succeed one after the other (v1 then v2); never two v1s.
	if ok == 2 && tags != "ns/v1\nns/v2" || ok == 1 && tags != "ns/v1" {
		t.Errorf("%d approvals succeeded, tags:\n%s", ok, tags)
	}
	gitfixture.Git(t, bare, "fsck", "--strict")
}

func TestCheckNames(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	for _, c := range [][2]string{{"", "v1"}, {"/abs", "v1"}, {"a/../b", "v1"}, {"ns", ""}, {"ns", "a/b"}} {
		if _, err := s.CreateDraft(context.Background(), c[0], c[1], nsPackage, nil); err == nil {
			t.Errorf("CreateDraft(%q, %q) succeeded", c[0], c[1])
		}
	}
}

// TestLifecycleOverHTTP writes through git's smart HTTP protocol (git
// http-backend), as kptbot does against a remote: pushes carry the
// expected old values, so a writer with a stale view is refused.
func TestLifecycleOverHTTP(t *testing.T) {
	t.Parallel()
	_, bare := newStore(t)
	gitfixture.Git(t, bare, "config", "http.receivepack", "true")
	srv := gitfixture.HTTPServer(t, filepath.Dir(bare))
	url := srv.URL + "/" + filepath.Base(bare)
	ctx := context.Background()
	s1, err := OpenStore(ctx, url, "main")
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{"a", "b"} {
		if _, err := s1.CreateDraft(ctx, "ns", ws, nsPackage, []byte(`{"type":"init"}`)); err != nil {
			t.Fatal(err)
		}
		if err := s1.Propose(ctx, "ns", ws); err != nil {
			t.Fatal(err)
		}
	}
	stale, err := OpenStore(ctx, url, "main") // sees both proposals, no tags
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s1.Approve(ctx, "ns", "a"); err != nil || n != 1 {
		t.Fatalf("Approve over HTTP = %d, %v", n, err)
	}
	if _, err := stale.Approve(ctx, "ns", "b"); !errors.Is(err, ErrConflict) {
		t.Errorf("approval from a stale clone: %v, want ErrConflict", err)
	}
	refs := gitfixture.Git(t, bare, "for-each-ref", "--format=%(refname)")
	if refs != "refs/heads/main\nrefs/heads/proposed/ns/b\nrefs/tags/ns/v1" {
		t.Errorf("refs after HTTP writes:\n%s", refs)
	}
	gitfixture.Git(t, bare, "fsck", "--strict")
	// A fresh clone approves b as v2.
	fresh, err := OpenStore(ctx, url, "main")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := fresh.Approve(ctx, "ns", "b"); err != nil || n != 2 {
		t.Fatalf("fresh Approve = %d, %v", n, err)
	}
}
