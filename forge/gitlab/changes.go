package gitlab

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/kptbot/kptbot/forge"
)

// draftPrefix is what this adapter puts in front of a draft's title.
// GitLab has no draft field to write: a merge request is a draft while its
// title starts with "Draft:", "[Draft]" or "(Draft)".
const draftPrefix = "Draft: "

// stripDraft removes every leading draft marker from a title.
func stripDraft(title string) string {
	for IsDraftTitle(title) {
		switch {
		case strings.HasPrefix(strings.ToLower(title), "draft:"):
			title = title[len("draft:"):]
		default: // [Draft] or (Draft)
			title = title[len("[draft]"):]
		}
		title = strings.TrimLeft(title, " ")
	}
	return title
}

func draftTitle(title string, draft bool) string {
	title = stripDraft(title)
	if draft {
		return draftPrefix + title
	}
	return title
}

// change converts a merge request. Title is the title without its draft
// marker, which Draft carries, so that callers can edit one without the
// other.
func change(mr *gl.BasicMergeRequest, baseSHA string) forge.Change {
	c := forge.Change{
		Number: int(mr.IID), Title: stripDraft(mr.Title), Body: mr.Description,
		Draft: mr.Draft || IsDraftTitle(mr.Title), State: changeState(mr.State),
		HeadRef: mr.SourceBranch, HeadSHA: mr.SHA, BaseRef: mr.TargetBranch, BaseSHA: baseSHA,
		Labels: mr.Labels, URL: mr.WebURL, FromFork: IsFork(mr.SourceProjectID, mr.TargetProjectID),
		Merged: mr.State == "merged",
	}
	if mr.Author != nil {
		c.Author = user(mr.Author.Username, mr.Author.ID)
	}
	if c.Merged {
		c.MergeCommitSHA = mergedSHA(mr)
	}
	return c
}

func fullChange(mr *gl.MergeRequest) forge.Change {
	return change(&mr.BasicMergeRequest, mr.DiffRefs.BaseSha)
}

// mergedSHA is the commit a merge put on the target branch: the merge
// commit, else the squash commit, else (fast-forward merges) the head.
func mergedSHA(mr *gl.BasicMergeRequest) string {
	switch {
	case mr.MergeCommitSHA != "":
		return mr.MergeCommitSHA
	case mr.SquashCommitSHA != "":
		return mr.SquashCommitSHA
	default:
		return mr.SHA
	}
}

func (c *Client) listChanges(ctx context.Context, r forge.Repo, op string, opt *gl.ListProjectMergeRequestsOptions, keep func(*gl.BasicMergeRequest) bool) ([]forge.Change, error) {
	id, err := pid(r)
	if err != nil {
		return nil, err
	}
	opt.ListOptions = perPage
	mrs, err := collect(func(p gl.RequestOptionFunc) ([]*gl.BasicMergeRequest, *gl.Response, error) {
		return c.gl.MergeRequests.ListProjectMergeRequests(id, opt, ctxOpt(ctx), p)
	})
	if err != nil {
		return nil, c.apiError(op, err)
	}
	var out []forge.Change
	for _, mr := range mrs {
		if keep(mr) {
			out = append(out, change(mr, ""))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// ListChangesByHead implements forge.ChangeReader: merge requests of any state
// from branch head of this project (not a fork's branch of that name).
func (c *Client) ListChangesByHead(ctx context.Context, r forge.Repo, head string) ([]forge.Change, error) {
	return c.listChanges(ctx, r, fmt.Sprintf("listing merge requests from %s in %s", head, r.FullName),
		&gl.ListProjectMergeRequestsOptions{State: gl.Ptr("all"), SourceBranch: gl.Ptr(head)},
		func(mr *gl.BasicMergeRequest) bool {
			return mr.SourceBranch == head && !IsFork(mr.SourceProjectID, mr.TargetProjectID)
		})
}

// ListOpenChanges implements forge.ChangeReader: every open merge request,
// forks' included (FromFork set).
func (c *Client) ListOpenChanges(ctx context.Context, r forge.Repo) ([]forge.Change, error) {
	return c.listChanges(ctx, r, "listing open merge requests of "+r.FullName,
		&gl.ListProjectMergeRequestsOptions{State: gl.Ptr("opened")},
		func(*gl.BasicMergeRequest) bool { return true })
}

// GetChange implements forge.ChangeReader.
func (c *Client) GetChange(ctx context.Context, r forge.Repo, number int) (forge.Change, error) {
	mr, err := c.getMR(ctx, r, number)
	if err != nil {
		return forge.Change{}, err
	}
	return fullChange(mr), nil
}

func (c *Client) getMR(ctx context.Context, r forge.Repo, number int) (*gl.MergeRequest, error) {
	id, err := pid(r)
	if err != nil {
		return nil, err
	}
	mr, _, err := c.gl.MergeRequests.GetMergeRequest(id, int64(number), nil, ctxOpt(ctx))
	if err != nil {
		return nil, c.apiError(fmt.Sprintf("reading %s!%d", r.FullName, number), err)
	}
	return mr, nil
}

// OpenChange implements forge.ChangeWriter. A draft is opened with the Draft:
// title prefix; a second open merge request for the same source branch is
// GitLab's 409, ErrConflict.
func (c *Client) OpenChange(ctx context.Context, r forge.Repo, s forge.ChangeSpec) (forge.Change, error) {
	id, err := pid(r)
	if err != nil {
		return forge.Change{}, err
	}
	op := fmt.Sprintf("opening a merge request from %s in %s", s.Head, r.FullName)
	opt := &gl.CreateMergeRequestOptions{
		Title: gl.Ptr(draftTitle(oneLine(s.Title), s.Draft)), Description: gl.Ptr(inertText(s.Body)),
		SourceBranch: gl.Ptr(s.Head), TargetBranch: gl.Ptr(s.Base),
	}
	if len(s.Labels) > 0 {
		opt.Labels = gl.Ptr(gl.LabelOptions(s.Labels))
	}
	mr, _, err := c.gl.MergeRequests.CreateMergeRequest(id, opt, ctxOpt(ctx))
	if err != nil {
		if er, ok := rejected(err, []int{http.StatusBadRequest, http.StatusUnprocessableEntity}, "source_branch", "does not exist"); ok {
			return forge.Change{}, fmt.Errorf("%s: %w: head branch %q (%s)", op, forge.ErrNotFound, s.Head, er.Message)
		}
		return forge.Change{}, c.apiError(op, err)
	}
	return fullChange(mr), nil
}

// UpdateChange implements forge.ChangeWriter. Draft and title share GitLab's
// title field, so the new title is computed from both: a title change
// keeps the draft state, a draft change keeps the title.
func (c *Client) UpdateChange(ctx context.Context, r forge.Repo, number int, u forge.ChangeUpdate) (forge.Change, error) {
	id, err := pid(r)
	if err != nil {
		return forge.Change{}, err
	}
	op := fmt.Sprintf("updating %s!%d", r.FullName, number)
	cur, err := c.getMR(ctx, r, number)
	if err != nil {
		return forge.Change{}, err
	}
	curDraft := cur.Draft || IsDraftTitle(cur.Title)
	title, draft := stripDraft(cur.Title), curDraft
	if u.Title != nil {
		title = oneLine(*u.Title)
	}
	if u.Draft != nil {
		draft = *u.Draft
	}
	opt := &gl.UpdateMergeRequestOptions{}
	changed := false
	if t := draftTitle(title, draft); t != cur.Title && (u.Title != nil || draft != curDraft) {
		opt.Title, changed = gl.Ptr(t), true
	}
	if u.Body != nil && inertText(*u.Body) != cur.Description {
		opt.Description, changed = gl.Ptr(inertText(*u.Body)), true
	}
	if u.Labels != nil {
		// An empty list is sent as labels="", which removes them all.
		opt.Labels, changed = gl.Ptr(gl.LabelOptions(u.Labels)), true
	}
	if !changed {
		return fullChange(cur), nil
	}
	mr, _, err := c.gl.MergeRequests.UpdateMergeRequest(id, int64(number), opt, ctxOpt(ctx))
	if err != nil {
		return forge.Change{}, c.apiError(op, err)
	}
	return fullChange(mr), nil
}

// CloseChange implements forge.ChangeWriter.
func (c *Client) CloseChange(ctx context.Context, r forge.Repo, number int) error {
	id, err := pid(r)
	if err != nil {
		return err
	}
	if _, _, err := c.gl.MergeRequests.UpdateMergeRequest(id, int64(number), &gl.UpdateMergeRequestOptions{StateEvent: gl.Ptr("close")}, ctxOpt(ctx)); err != nil {
		return c.apiError(fmt.Sprintf("closing %s!%d", r.FullName, number), err)
	}
	return nil
}

// Merge implements forge.ChangeWriter, passing sha so GitLab merges only that
// head: a moved head is GitLab's 409 "SHA does not match HEAD of source
// branch" (ErrConflict). GitLab's other refusals (405 for a draft, a
// closed merge request or a pipeline that must succeed, 406/422 for
// conflicts and unmet merge checks) are ErrNotMergeable with GitLab's
// message. method is "merge" (or empty) or "squash"; the project's merge
// method (merge commit, semi-linear, fast-forward) is GitLab's setting.
func (c *Client) Merge(ctx context.Context, r forge.Repo, number int, expectedHeadSHA, method string) (string, error) {
	id, err := pid(r)
	if err != nil {
		return "", err
	}
	if expectedHeadSHA == "" {
		return "", fmt.Errorf("merging %s!%d: the approved head SHA is required", r.FullName, number)
	}
	op := fmt.Sprintf("merging %s!%d at %s", r.FullName, number, expectedHeadSHA)
	opt := &gl.AcceptMergeRequestOptions{SHA: gl.Ptr(expectedHeadSHA)}
	switch method {
	case "", "merge":
	case "squash":
		opt.Squash = gl.Ptr(true)
	default:
		return "", fmt.Errorf("%s: %w: merge method %q (want merge or squash; rebase and fast-forward are the project's merge method setting)",
			op, forge.ErrNotSupported, method)
	}
	mr, _, err := c.gl.MergeRequests.AcceptMergeRequest(id, int64(number), opt, ctxOpt(ctx))
	if err != nil {
		refusals := []int{http.StatusMethodNotAllowed, http.StatusNotAcceptable, http.StatusUnprocessableEntity}
		if er, ok := rejected(err, refusals); ok {
			return "", fmt.Errorf("%s: %w: GitLab answered %d %s", op, forge.ErrNotMergeable, er.Response.StatusCode, er.Message)
		}
		return "", c.apiError(op, err)
	}
	if mr.State != "merged" {
		return "", fmt.Errorf("%s: %w: the merge request is %s after the merge call", op, forge.ErrNotMergeable, mr.State)
	}
	return mergedSHA(&mr.BasicMergeRequest), nil
}
