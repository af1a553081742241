package gitlab

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/kptbot/kptbot/forge"
)

// approvalNote is the body of the system note GitLab writes when a user
// approves a merge request ("unapproved this merge request" when the
// approval is revoked).
const approvalNote = "approved this merge request"

// approvalState is the part of GET .../merge_requests/:iid/approvals this
// adapter reads. approvals_left and approved are deliberately absent: on
// the Free tier no rule requires an approval, so they report "approved"
// with nobody having approved. approved_at is sent by recent GitLab
// versions; older ones have only the user.
type approvalState struct {
	ApprovedBy []struct {
		User       gl.BasicUser `json:"user"`
		ApprovedAt *time.Time   `json:"approved_at"`
	} `json:"approved_by"`
}

// ListReviews implements forge.ChangeReader with GitLab's approvals: one
// approved Review per user currently in approved_by (a revoked approval is
// gone from that list, so it never appears).
//
// GitLab does not record which commit an approval was for, so CommitSHA is
// derived without state: the approval's time (approved_at, or the newest
// "approved this merge request" system note by that user) is matched
// against the merge request's diff versions, and the head of the newest
// version created at or before it is the head the approver saw. An
// approval whose time cannot be found gets no CommitSHA, and so counts for
// no commit. A push lands as a new version within seconds; an approval in
// that window counts for the older head, never for a newer one.
func (c *Client) ListReviews(ctx context.Context, r forge.Repo, number int) ([]forge.Review, error) {
	id, err := pid(r)
	if err != nil {
		return nil, err
	}
	op := fmt.Sprintf("listing approvals of %s!%d", r.FullName, number)
	req, err := c.gl.NewRequest(http.MethodGet, fmt.Sprintf("projects/%s/merge_requests/%d/approvals", gl.PathEscape(projectKey(id)), number), nil,
		[]gl.RequestOptionFunc{ctxOpt(ctx)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var state approvalState
	if _, err := c.gl.Do(req, &state); err != nil {
		return nil, c.apiError(op, err)
	}
	if len(state.ApprovedBy) == 0 {
		return nil, nil
	}
	versions, err := collect(func(p gl.RequestOptionFunc) ([]*gl.MergeRequestDiffVersion, *gl.Response, error) {
		return c.gl.MergeRequests.GetMergeRequestDiffVersions(id, int64(number), &gl.GetMergeRequestDiffVersionsOptions{ListOptions: perPage}, ctxOpt(ctx), p)
	})
	if err != nil {
		return nil, c.apiError(op+": diff versions", err)
	}
	var notes map[int64]*gl.Note
	out := make([]forge.Review, 0, len(state.ApprovedBy))
	for _, a := range state.ApprovedBy {
		rv := forge.Review{State: forge.ReviewApproved, Reviewer: user(a.User.Username, a.User.ID)}
		at := a.ApprovedAt
		if at == nil {
			if notes == nil {
				if notes, err = c.approvalNotes(ctx, id, number); err != nil {
					return nil, c.apiError(op+": notes", err)
				}
			}
			if n, ok := notes[a.User.ID]; ok {
				at, rv.ID = n.CreatedAt, n.ID
			}
		}
		if at != nil {
			rv.CommitSHA, rv.SubmittedAt = headAt(versions, *at), *at
		}
		out = append(out, rv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Reviewer.Login < out[j].Reviewer.Login })
	return out, nil
}

// approvalNotes returns each user's newest approval system note.
func (c *Client) approvalNotes(ctx context.Context, id any, number int) (map[int64]*gl.Note, error) {
	opt := &gl.ListMergeRequestNotesOptions{ListOptions: perPage, OrderBy: gl.Ptr("created_at"), Sort: gl.Ptr("asc")}
	notes, err := collect(func(p gl.RequestOptionFunc) ([]*gl.Note, *gl.Response, error) {
		return c.gl.Notes.ListMergeRequestNotes(id, int64(number), opt, ctxOpt(ctx), p)
	})
	if err != nil {
		return nil, err
	}
	out := map[int64]*gl.Note{}
	for _, n := range notes {
		if !n.System || n.CreatedAt == nil || strings.TrimSpace(n.Body) != approvalNote {
			continue
		}
		if prev, ok := out[n.Author.ID]; !ok || !n.CreatedAt.Before(*prev.CreatedAt) {
			out[n.Author.ID] = n
		}
	}
	return out, nil
}

// headAt returns the head commit of the newest diff version created at or
// before t ("" when there is none).
func headAt(versions []*gl.MergeRequestDiffVersion, t time.Time) string {
	var best *gl.MergeRequestDiffVersion
	for _, v := range versions {
		if v.CreatedAt == nil || v.CreatedAt.After(t) {
			continue
		}
		if best == nil || v.CreatedAt.After(*best.CreatedAt) || (v.CreatedAt.Equal(*best.CreatedAt) && v.ID > best.ID) {
			best = v
		}
	}
	if best == nil {
		return ""
	}
	return best.HeadCommitSHA
}
