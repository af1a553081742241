package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
)

// mrFixture is a project with branch kptbot/x one commit ahead of main and
// a merge request from it.
func mrFixture(t *testing.T, spec forge.ChangeSpec) (*gitlabtest.Server, *Client, forge.Repo, forge.Change) {
	t.Helper()
	f, c := newFakeGitLab(t, "/api/v4")
	repo := forge.Repo{FullName: "acme/site-a"}
	base := f.Seed(repo, "main", map[string][]byte{"a.yaml": []byte("a: 1\n")})
	if _, err := c.PushFiles(context.Background(), repo, "kptbot/x", "", base, map[string][]byte{"a.yaml": []byte("a: 2\n")}, "x"); err != nil {
		t.Fatal(err)
	}
	spec.Head, spec.Base = "kptbot/x", "main"
	ch, err := c.OpenChange(context.Background(), repo, spec)
	if err != nil {
		t.Fatal(err)
	}
	return f, c, repo, ch
}

func TestDraftTitlePrefixBothWays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c, repo, ch := mrFixture(t, forge.ChangeSpec{Title: "Update basens to v2", Draft: true, Labels: []string{"kptbot", "basens"}})
	if got := f.MergeRequest(repo, ch.Number).Title; got != "Draft: Update basens to v2" {
		t.Errorf("GitLab title = %q, want the Draft: prefix", got)
	}
	if !ch.Draft || ch.Title != "Update basens to v2" || len(ch.Labels) != 2 {
		t.Errorf("OpenChange = %+v, want a draft titled without the prefix, with both labels", ch)
	}
	title := "Update basens to v3"
	got, err := c.UpdateChange(ctx, repo, ch.Number, forge.ChangeUpdate{Title: &title})
	if err != nil || !got.Draft || f.MergeRequest(repo, ch.Number).Title != "Draft: Update basens to v3" {
		t.Errorf("retitling a draft: %+v, %v, GitLab title %q; want it to stay a draft", got, err, f.MergeRequest(repo, ch.Number).Title)
	}
	ready := false
	got, err = c.UpdateChange(ctx, repo, ch.Number, forge.ChangeUpdate{Draft: &ready, Labels: []string{}})
	if err != nil || got.Draft || got.Title != title || len(got.Labels) != 0 || f.MergeRequest(repo, ch.Number).Title != title {
		t.Errorf("ready for review: %+v, %v, GitLab title %q; want no prefix and no labels", got, err, f.MergeRequest(repo, ch.Number).Title)
	}
	draft := true
	if got, err = c.UpdateChange(ctx, repo, ch.Number, forge.ChangeUpdate{Draft: &draft}); err != nil || !got.Draft || f.MergeRequest(repo, ch.Number).Title != "Draft: "+title {
		t.Errorf("back to draft: %+v, %v, GitLab title %q", got, err, f.MergeRequest(repo, ch.Number).Title)
	}
	n := len(f.Requests())
	if _, err := c.UpdateChange(ctx, repo, ch.Number, forge.ChangeUpdate{Draft: &draft}); err != nil {
		t.Fatal(err)
	}
	if log := f.Requests()[n:]; len(log) != 1 || !strings.HasPrefix(log[0], "GET ") {
		t.Errorf("a no-op update sent %v, want only the read", log)
	}
}

func TestStripDraft(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Draft: x": "x", "draft:x": "x", "[Draft] x": "x", "(draft) x": "x", "Draft: [Draft] x": "x",
		"x": "x", "Drafting x": "Drafting x", "": "",
	} {
		if got := stripDraft(in); got != want {
			t.Errorf("stripDraft(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMergeRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c, repo, ch := mrFixture(t, forge.ChangeSpec{Title: "x", Draft: true})
	_, err := c.Merge(ctx, repo, ch.Number, ch.HeadSHA, "merge")
	if !errors.Is(err, forge.ErrNotMergeable) || errors.Is(err, forge.ErrConflict) || !strings.Contains(err.Error(), "405") {
		t.Errorf("merging a draft: %v, want ErrNotMergeable with GitLab's 405", err)
	}
	ready := false
	if _, err := c.UpdateChange(ctx, repo, ch.Number, forge.ChangeUpdate{Draft: &ready}); err != nil {
		t.Fatal(err)
	}
	moved, err := c.PushFiles(ctx, repo, "kptbot/x", ch.HeadSHA, ch.HeadSHA, map[string][]byte{"b.yaml": []byte("b\n")}, "more")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Merge(ctx, repo, ch.Number, ch.HeadSHA, "merge"); !errors.Is(err, forge.ErrConflict) || !strings.Contains(err.Error(), "SHA does not match HEAD") {
		t.Errorf("merging a stale sha: %v, want ErrConflict with GitLab's message", err)
	}
	if _, err := c.Merge(ctx, repo, ch.Number, moved, "rebase"); !errors.Is(err, forge.ErrNotSupported) {
		t.Errorf("merge method rebase: %v, want ErrNotSupported", err)
	}
	f.SetMergeBlocked(repo, ch.Number, true)
	if _, err := c.Merge(ctx, repo, ch.Number, moved, "merge"); !errors.Is(err, forge.ErrNotMergeable) || !strings.Contains(err.Error(), "Branch cannot be merged") {
		t.Errorf("merging with conflicts: %v, want ErrNotMergeable with GitLab's message", err)
	}
	f.SetMergeBlocked(repo, ch.Number, false)
	sha, err := c.Merge(ctx, repo, ch.Number, moved, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetChange(ctx, repo, ch.Number)
	if err != nil || got.State != "merged" || !got.Merged || got.MergeCommitSHA != sha {
		t.Errorf("GetChange after merge = %+v, %v; want merged at %s", got, err, sha)
	}
	if _, err := c.Merge(ctx, repo, 99, moved, ""); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("merging a missing merge request: %v, want ErrNotFound", err)
	}
}

func TestListReviews(t *testing.T) {
	t.Parallel()
	for _, approvedAt := range []bool{false, true} {
		t.Run(fmt.Sprintf("approved_at=%v", approvedAt), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f, c, repo, ch := mrFixture(t, forge.ChangeSpec{Title: "x"})
			f.SetApprovedAt(approvedAt)
			// Free tier: nothing required, so approvals_left is 0 and
			// approved is true with nobody having approved.
			if rs, err := c.ListReviews(ctx, repo, ch.Number); err != nil || len(rs) != 0 {
				t.Errorf("ListReviews with approvals_left 0 and no approvers = %+v, %v; want none", rs, err)
			}
			v1 := ch.HeadSHA
			f.ApproveAt(repo, ch.Number, "alice", v1)
			v2, err := c.PushFiles(ctx, repo, "kptbot/x", v1, v1, map[string][]byte{"c.yaml": []byte("c\n")}, "after alice")
			if err != nil {
				t.Fatal(err)
			}
			f.Approve(repo, ch.Number, "bob")
			f.Approve(repo, ch.Number, "carol")
			f.Unapprove(repo, ch.Number, "carol")
			rs, err := c.ListReviews(ctx, repo, ch.Number)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range rs {
				if r.State != forge.ReviewApproved {
					t.Errorf("review %+v: want state approved", r)
				}
				got[r.Reviewer.Login] = r.CommitSHA
			}
			want := map[string]string{"alice": v1, "bob": v2}
			if len(got) != len(want) || got["alice"] != v1 || got["bob"] != v2 {
				t.Errorf("approvals = %v, want alice at v1 %s and bob at v2 %s, carol (revoked) absent", got, v1, v2)
			}
		})
	}
}

func TestListReviewsNeverTrustsApprovalsLeft(t *testing.T) {
	t.Parallel()
	f, c, repo, ch := mrFixture(t, forge.ChangeSpec{Title: "x"})
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, "/approvals") {
			return false
		}
		writeJSON(w, http.StatusOK, map[string]any{"iid": ch.Number, "approved": true, "approvals_required": 0, "approvals_left": 0, "approved_by": []any{}})
		return true
	})
	if rs, err := c.ListReviews(context.Background(), repo, ch.Number); err != nil || len(rs) != 0 {
		t.Errorf("ListReviews = %+v, %v; want no reviews", rs, err)
	}
}

func TestChangesByHeadSkipForks(t *testing.T) {
	t.Parallel()
	f, c, repo, ch := mrFixture(t, forge.ChangeSpec{Title: "x"})
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/v4/projects/acme/site-a/merge_requests" || r.Method != http.MethodGet {
			return false
		}
		mr := func(iid, source int) map[string]any {
			return map[string]any{"iid": iid, "title": "t", "state": "opened", "source_branch": "kptbot/x", "target_branch": "main",
				"source_project_id": source, "target_project_id": 1, "sha": ch.HeadSHA, "author": map[string]any{"id": 5, "username": "u"}}
		}
		writeJSON(w, http.StatusOK, []any{mr(1, 1), mr(2, 99)})
		return true
	})
	got, err := c.ListChangesByHead(context.Background(), repo, "kptbot/x")
	if err != nil || len(got) != 1 || got[0].Number != 1 || got[0].FromFork {
		t.Errorf("ListChangesByHead = %+v, %v; want only !1 (!2 comes from a fork)", got, err)
	}
	open, err := c.ListOpenChanges(context.Background(), repo)
	if err != nil || len(open) != 2 || !open[1].FromFork {
		t.Errorf("ListOpenChanges = %+v, %v; want both, !2 marked FromFork", open, err)
	}
}
