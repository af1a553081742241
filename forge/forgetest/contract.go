package forgetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
)

// Harness is a forge adapter under test (the roles forge.Compose finds on
// it, and its repository listing) plus the two things only a test can do
// on it: create a repository with content, and review a change as a human.
type Harness interface {
	forge.RepoLister
	Seed(r forge.Repo, branch string, files map[string][]byte) string
	Review(r forge.Repo, number int, rv forge.Review)
}

// Contract pins the rules every forge adapter must keep, because the bot's
// safety rests on them: pushes and merges are compare-and-swap, tags are
// idempotent but never move, a moved head is never merged, and missing
// things are forge.ErrNotFound. newHarness returns a fresh, empty forge.
func Contract(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	ctx := context.Background()
	repo := forge.Repo{Forge: forge.GitHub, FullName: "acme/site-a", DefaultBranch: "main"}
	for _, c := range []struct {
		name string
		run  func(ctx context.Context, t *testing.T, h Harness, f forge.Forge, repo forge.Repo)
	}{
		{"ReadFile", contractReadFile},
		{"ListTree", contractListTree},
		{"ChecksReposDispatch", contractChecksReposDispatch},
		{"PushIsCompareAndSwap", contractPushIsCompareAndSwap},
		{"MergeOnlyTheApprovedHead", contractMergeOnlyTheApprovedHead},
		{"ChangesByHeadAndClose", contractChangesByHeadAndClose},
		{"Comments", contractComments},
		{"ReadTreeAndDeleteBranch", contractReadTreeAndDeleteBranch},
		{"Log", contractLog},
		{"OpenChangesAndIssues", contractOpenChangesAndIssues},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			c.run(ctx, t, h, forge.Compose(h), repo)
		})
	}
}

// contractReadFile: a file at a ref is its content; a missing file or ref
// is forge.ErrNotFound.
func contractReadFile(ctx context.Context, t *testing.T, h Harness, f forge.Forge, repo forge.Repo) {
	h.Seed(repo, "main", map[string][]byte{"Kptfile": []byte("kind: Kptfile\n")})
	got, err := f.ReadFile(ctx, repo, "main", "Kptfile")
	if err != nil || string(got) != "kind: Kptfile\n" {
		t.Fatalf("ReadFile(main, Kptfile) = %q, %v", got, err)
	}
	if _, err := f.ReadFile(ctx, repo, "main", "missing.yaml"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("ReadFile(missing file) error = %v, want ErrNotFound", err)
	}
	if _, err := f.ReadFile(ctx, repo, "no-such-branch", "Kptfile"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("ReadFile(missing ref) error = %v, want ErrNotFound", err)
	}
}

// contractListTree: the files under a directory (a sibling with a longer
// name is not a child), all files at the root, ErrNotFound for a missing ref.
func contractListTree(ctx context.Context, t *testing.T, h Harness, f forge.Forge, repo forge.Repo) {
	h.Seed(repo, "main", map[string][]byte{
		"sites/a/Kptfile": []byte("a"), "sites/a/cm.yaml": []byte("b"), "sites/ab/Kptfile": []byte("c"), "README.md": []byte("d"),
	})
	got, err := f.ListTree(ctx, repo, "main", "sites/a")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sites/a/Kptfile", "sites/a/cm.yaml"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ListTree(sites/a) = %v, want %v (sites/ab is a sibling, not a child)", got, want)
	}
	if all, err := f.ListTree(ctx, repo, "main", ""); err != nil || len(all) != 4 {
		t.Errorf("ListTree(root) = %v, %v; want 4 files", all, err)
	}
	if _, err := f.ListTree(ctx, repo, "nope", ""); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("ListTree(missing ref) error = %v, want ErrNotFound", err)
	}
}

// contractChecksReposDispatch: check reports (a completed one needs a
// conclusion), the repository listing and dispatches.
func contractChecksReposDispatch(ctx context.Context, t *testing.T, h Harness, f forge.Forge, repo forge.Repo) {
	sha := h.Seed(repo, "main", map[string][]byte{"a.yaml": []byte("a: 1\n")})
	ok := forge.CheckReport{Name: "kptbot/render", HeadSHA: sha, Status: forge.CheckCompleted, Conclusion: forge.CheckSuccess, Title: "rendered"}
	if err := f.ReportCheck(ctx, repo, ok); err != nil {
		t.Fatalf("ReportCheck: %v", err)
	}
	bad := ok
	bad.Conclusion = ""
	if err := f.ReportCheck(ctx, repo, bad); err == nil {
		t.Error("ReportCheck(completed without conclusion) succeeded, want an error")
	}
	missing := ok
	missing.HeadSHA = "0000000000000000000000000000000000000000"
	if err := f.ReportCheck(ctx, repo, missing); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("ReportCheck(unknown commit) error = %v, want ErrNotFound", err)
	}
	repos, err := h.ListRepos(ctx)
	if err != nil || len(repos) != 1 || repos[0].FullName != repo.FullName {
		t.Errorf("ListRepos = %v, %v; want [%s]", repos, err, repo.FullName)
	}
	// Visibility decides what the bot may copy where: the listing
	// must say which repositories are private.
	if v, ok := h.(interface{ SetPrivate(forge.Repo, bool) }); ok {
		for _, private := range []bool{true, false} {
			v.SetPrivate(repo, private)
			if repos, err := h.ListRepos(ctx); err != nil || len(repos) != 1 || repos[0].Private != private {
				t.Errorf("ListRepos after SetPrivate(%v) = %+v, %v", private, repos, err)
			}
		}
	}
	if err := f.Dispatch(ctx, repo, "kptbot-upstream-tag", map[string]any{"tag": "pkg/v1"}); err != nil {
		t.Errorf("Dispatch: %v", err)
	}
	if err := f.Dispatch(ctx, forge.Repo{FullName: "acme/none"}, "kptbot-upstream-tag", nil); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("Dispatch(missing repo) error = %v, want ErrNotFound", err)
	}
}

// contractPushIsCompareAndSwap: a push names the branch's old SHA (empty:
// it must not exist) and is refused with ErrConflict otherwise, so a
// human's commit is never lost; nil content deletes a file.
func contractPushIsCompareAndSwap(ctx context.Context, t *testing.T, h Harness, f forge.Forge, repo forge.Repo) {
	base := h.Seed(repo, "main", map[string][]byte{"a.yaml": []byte("a: 1\n"), "b.yaml": []byte("b: 1\n")})
	files := map[string][]byte{"a.yaml": []byte("a: 2\n"), "b.yaml": nil}
	first, err := f.PushFiles(ctx, repo, "kptbot/update", "", base, files, "update")
	if err != nil {
		t.Fatalf("creating branch: %v", err)
	}
	if _, err := f.ReadFile(ctx, repo, first, "b.yaml"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("nil content did not delete b.yaml: %v", err)
	}
	if _, err := f.PushFiles(ctx, repo, "kptbot/update", "", base, files, "again"); !errors.Is(err, forge.ErrConflict) {
		t.Errorf("creating an existing branch: error = %v, want ErrConflict", err)
	}
	if _, err := f.PushFiles(ctx, repo, "kptbot/update", base, base, files, "stale"); !errors.Is(err, forge.ErrConflict) {
		t.Errorf("push with stale oldSHA: error = %v, want ErrConflict (a human's commit would be lost)", err)
	}
	second, err := f.PushFiles(ctx, repo, "kptbot/update", first, first, map[string][]byte{"c.yaml": []byte("c: 1\n")}, "more")
	if err != nil {
		t.Fatalf("push with current oldSHA: %v", err)
	}
	branches, err := f.ListBranches(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if !hasBranch(branches, "kptbot/update", second) || !hasBranch(branches, "main", base) {
		t.Errorf("ListBranches = %v, want kptbot/update at %s and main untouched at %s", branches, second, base)
	}
}

// contractMergeOnlyTheApprovedHead: one open change per head, and a merge
// of exactly the approved head; tags are idempotent but never move.
func contractMergeOnlyTheApprovedHead(ctx context.Context, t *testing.T, h Harness, f forge.Forge, repo forge.Repo) {
	base := h.Seed(repo, "main", map[string][]byte{"a.yaml": []byte("a: 1\n")})
	approved, err := f.PushFiles(ctx, repo, "draft/v1", "", base, map[string][]byte{"a.yaml": []byte("a: 2\n")}, "v1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.OpenChange(ctx, repo, forge.ChangeSpec{Head: "draft/v1", Base: "main", Title: "v1", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.OpenChange(ctx, repo, forge.ChangeSpec{Head: "draft/v1", Base: "main", Title: "dup"}); !errors.Is(err, forge.ErrConflict) {
		t.Errorf("second open change for one head: error = %v, want ErrConflict", err)
	}
	if c.HeadSHA != approved {
		t.Fatalf("OpenChange head = %s, want %s", c.HeadSHA, approved)
	}
	if _, err := f.Merge(ctx, repo, c.Number, approved, "merge"); !errors.Is(err, forge.ErrNotMergeable) {
		t.Errorf("merging a draft: error = %v, want ErrNotMergeable", err)
	}
	ready := false
	if _, err := f.UpdateChange(ctx, repo, c.Number, forge.ChangeUpdate{Draft: &ready}); err != nil {
		t.Fatal(err)
	}
	h.Review(repo, c.Number, forge.Review{State: forge.ReviewApproved, Reviewer: forge.User{Login: "alice"}, CommitSHA: approved})
	moved, err := f.PushFiles(ctx, repo, "draft/v1", approved, approved, map[string][]byte{"evil.yaml": []byte("x: 1\n")}, "after approval")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Merge(ctx, repo, c.Number, approved, "merge"); !errors.Is(err, forge.ErrConflict) {
		t.Fatalf("merging after the head moved: error = %v, want ErrConflict (an unapproved SHA would be published)", err)
	}
	sha, err := f.Merge(ctx, repo, c.Number, moved, "merge")
	if err != nil {
		t.Fatalf("merging the current head: %v", err)
	}
	if got, err := f.ReadFile(ctx, repo, "main", "evil.yaml"); err != nil || string(got) != "x: 1\n" {
		t.Errorf("main after merge: evil.yaml = %q, %v", got, err)
	}
	if err := f.CreateTag(ctx, repo, "pkg/v1", sha, "v1"); err != nil {
		t.Fatalf("CreateTag: %v", err)
	}
	if err := f.CreateTag(ctx, repo, "pkg/v1", sha, "v1"); err != nil {
		t.Errorf("CreateTag again at the same commit must succeed (retries): %v", err)
	}
	if err := f.CreateTag(ctx, repo, "pkg/v1", base, "v1"); !errors.Is(err, forge.ErrConflict) {
		t.Errorf("moving a published tag: error = %v, want ErrConflict", err)
	}
	tags, err := f.ListTags(ctx, repo)
	if err != nil || len(tags) != 1 || tags[0] != (forge.Tag{Name: "pkg/v1", SHA: sha}) {
		t.Errorf("ListTags = %v, %v; want [pkg/v1 %s]", tags, err, sha)
	}
	reviews, err := f.ListReviews(ctx, repo, c.Number)
	if err != nil || len(reviews) != 1 || reviews[0].CommitSHA != approved {
		t.Errorf("ListReviews = %v, %v; want alice's approval of %s", reviews, err, approved)
	}
}

// contractChangesByHeadAndClose: changes found by their head branch, a
// change on a missing head refused with ErrNotFound, closing a change.
func contractChangesByHeadAndClose(ctx context.Context, t *testing.T, h Harness, f forge.Forge, repo forge.Repo) {
	base := h.Seed(repo, "main", map[string][]byte{"a.yaml": []byte("a: 1\n")})
	if _, err := f.PushFiles(ctx, repo, "kptbot/x", "", base, map[string][]byte{"a.yaml": []byte("a: 3\n")}, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.OpenChange(ctx, repo, forge.ChangeSpec{Head: "no-such-branch", Base: "main"}); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("OpenChange on a missing head: error = %v, want ErrNotFound", err)
	}
	c, err := f.OpenChange(ctx, repo, forge.ChangeSpec{Head: "kptbot/x", Base: "main", Title: "x", Labels: []string{"kptbot"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CloseChange(ctx, repo, c.Number); err != nil {
		t.Fatal(err)
	}
	got, err := f.ListChangesByHead(ctx, repo, "kptbot/x")
	if err != nil || len(got) != 1 || got[0].State != "closed" {
		t.Errorf("ListChangesByHead after close = %v, %v", got, err)
	}
	if err := f.CloseChange(ctx, repo, 999); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("CloseChange(999) error = %v, want ErrNotFound", err)
	}
}

// contractComments: comments written, listed, edited and reacted to.
func contractComments(ctx context.Context, t *testing.T, h Harness, f forge.Forge, repo forge.Repo) {
	base := h.Seed(repo, "main", map[string][]byte{"a.yaml": []byte("a: 1\n")})
	if _, err := f.PushFiles(ctx, repo, "kptbot/y", "", base, map[string][]byte{"a.yaml": []byte("a: 4\n")}, "y"); err != nil {
		t.Fatal(err)
	}
	c, err := f.OpenChange(ctx, repo, forge.ChangeSpec{Head: "kptbot/y", Base: "main", Title: "y"})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := f.Comment(ctx, repo, c.Number, "rendered")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.EditComment(ctx, repo, c.Number, cm.ID, "rendered again"); err != nil {
		t.Errorf("EditComment: %v", err)
	}
	if err := f.React(ctx, repo, c.Number, cm.ID, "+1"); err != nil {
		t.Errorf("React: %v", err)
	}
	if err := f.EditComment(ctx, repo, c.Number, cm.ID+1000, "x"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("EditComment(missing) error = %v, want ErrNotFound", err)
	}
	list, err := f.ListComments(ctx, repo, c.Number)
	if err != nil || len(list) != 1 || list[0].ID != cm.ID || list[0].Body != "rendered again" {
		t.Errorf("ListComments = %+v, %v; want the one edited comment", list, err)
	}
}

// contractReadTreeAndDeleteBranch: a directory's files at a ref with the
// commit read, and a branch deleted only where it was expected.
func contractReadTreeAndDeleteBranch(ctx context.Context, t *testing.T, h Harness, f forge.Forge, repo forge.Repo) {
	base := h.Seed(repo, "main", map[string][]byte{"pkgs/a/Kptfile": []byte("k\n"), "pkgs/a/sub/cm.yaml": []byte("c\n"), "pkgs/ab/Kptfile": []byte("x\n")})
	snap, err := f.ReadTree(ctx, repo, "main", "pkgs/a")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Commit != base || len(snap.Files) != 2 || string(snap.Files["Kptfile"]) != "k\n" || string(snap.Files["sub/cm.yaml"]) != "c\n" {
		t.Errorf("ReadTree(main, pkgs/a) = %s %v; want %s with Kptfile and sub/cm.yaml", snap.Commit, snap.Files, base)
	}
	if snap, err := f.ReadTree(ctx, repo, base, "nothing/here"); err != nil || len(snap.Files) != 0 {
		t.Errorf("ReadTree(empty dir) = %v, %v; want no files and no error", snap.Files, err)
	}
	if _, err := f.ReadTree(ctx, repo, "no-such-ref", ""); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("ReadTree(missing ref) error = %v, want ErrNotFound", err)
	}
	tip, err := f.PushFiles(ctx, repo, "drafts/a/v1", "", base, map[string][]byte{"pkgs/a/Kptfile": []byte("k2\n")}, "edit")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.DeleteBranch(ctx, repo, "drafts/a/v1", base); !errors.Is(err, forge.ErrConflict) {
		t.Errorf("DeleteBranch(stale sha) error = %v, want ErrConflict (a pushed commit would be lost)", err)
	}
	if err := f.DeleteBranch(ctx, repo, "drafts/a/v1", tip); err != nil {
		t.Errorf("DeleteBranch: %v", err)
	}
	if err := f.DeleteBranch(ctx, repo, "drafts/a/v1", tip); err != nil {
		t.Errorf("DeleteBranch(already gone) = %v, want success", err)
	}
	branches, _ := f.ListBranches(ctx, repo)
	if hasBranch(branches, "drafts/a/v1", tip) {
		t.Errorf("branch still listed after delete: %v", branches)
	}
}

// contractLog: the commits between two refs, newest first.
func contractLog(ctx context.Context, t *testing.T, h Harness, f forge.Forge, repo forge.Repo) {
	base := h.Seed(repo, "main", map[string][]byte{"a.yaml": []byte("a: 1\n")})
	one, err := f.PushFiles(ctx, repo, "main", base, base, map[string][]byte{"a.yaml": []byte("a: 2\n")}, "basens: raise a\n\nbecause")
	if err != nil {
		t.Fatal(err)
	}
	two, err := f.PushFiles(ctx, repo, "main", one, one, map[string][]byte{"b.yaml": []byte("b: 1\n")}, "basens: add b")
	if err != nil {
		t.Fatal(err)
	}
	log, err := f.Log(ctx, repo, base, "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].SHA != two || log[1].SHA != one || !strings.HasPrefix(log[0].Message, "basens: add b") || !strings.HasPrefix(log[1].Message, "basens: raise a") ||
		len(log[1].Parents) == 0 || log[1].Parents[0] != base {
		t.Errorf("Log(base, main) = %+v; want %s (add b) then %s (raise a)", log, two, one)
	}
	if _, err := f.Log(ctx, repo, base, "no-such-ref"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("Log(missing ref) error = %v, want ErrNotFound", err)
	}
}

// contractOpenChangesAndIssues: the open changes listed, and issues
// opened, found by label and edited.
func contractOpenChangesAndIssues(ctx context.Context, t *testing.T, h Harness, f forge.Forge, repo forge.Repo) {
	base := h.Seed(repo, "main", map[string][]byte{"a.yaml": []byte("a: 1\n")})
	for _, b := range []string{"x", "y"} {
		if _, err := f.PushFiles(ctx, repo, b, "", base, map[string][]byte{b + ".yaml": []byte("v: 1\n")}, b); err != nil {
			t.Fatal(err)
		}
	}
	cx, err := f.OpenChange(ctx, repo, forge.ChangeSpec{Head: "x", Base: "main", Title: "x", Body: "body x"})
	if err != nil {
		t.Fatal(err)
	}
	cy, err := f.OpenChange(ctx, repo, forge.ChangeSpec{Head: "y", Base: "main", Title: "y", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CloseChange(ctx, repo, cx.Number); err != nil {
		t.Fatal(err)
	}
	open, err := f.ListOpenChanges(ctx, repo)
	if err != nil || len(open) != 1 || open[0].Number != cy.Number || !open[0].Draft {
		t.Errorf("ListOpenChanges = %+v, %v; want only draft #%d", open, err, cy.Number)
	}
	got, err := f.GetChange(ctx, repo, cx.Number)
	if err != nil || got.State != "closed" || got.Body != "body x" || got.HeadRef != "x" {
		t.Errorf("GetChange(#%d) = %+v, %v; want the closed change with its body", cx.Number, got, err)
	}
	if _, err := f.GetChange(ctx, repo, 9999); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("GetChange(9999) error = %v, want ErrNotFound", err)
	}
	is, err := f.OpenIssue(ctx, repo, "kptbot dashboard", "v1", []string{"kptbot-dashboard"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.EditIssue(ctx, repo, is.Number, "kptbot dashboard", "v2"); err != nil {
		t.Fatal(err)
	}
	list, err := f.ListIssues(ctx, repo, "kptbot-dashboard")
	if err != nil || len(list) != 1 || list[0].Number != is.Number || list[0].Body != "v2" {
		t.Errorf("ListIssues = %+v, %v; want the edited dashboard", list, err)
	}
	if list, err := f.ListIssues(ctx, repo, "other"); err != nil || len(list) != 0 {
		t.Errorf("ListIssues(other label) = %+v, %v; want none", list, err)
	}
	if ok, err := f.TeamMember(ctx, repo, "acme/platform", "mallory"); err != nil || ok {
		t.Errorf("TeamMember(non-member) = %v, %v; want false", ok, err)
	}
}

func hasBranch(bs []forge.Branch, name, sha string) bool {
	for _, b := range bs {
		if b.Name == name && b.SHA == sha {
			return true
		}
	}
	return false
}
