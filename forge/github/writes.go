package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitrepo"
)

// PushFiles implements forge.Pusher with one git push over HTTPS to the
// repository's clone URL (not one REST call per file), as a
// compare-and-swap on the branch's old SHA.
func (c *Client) PushFiles(ctx context.Context, r forge.Repo, branch, oldSHA, base string, files map[string][]byte, message string) (string, error) {
	url, err := c.remoteURL(ctx, r)
	if err != nil {
		return "", err
	}
	p := gitrepo.Push{URL: url, Branch: branch, OldSHA: oldSHA, Base: base, Files: files, Message: message, Author: c.Author}
	if c.GitAuth != nil {
		auth, err := c.GitAuth(ctx)
		if err != nil {
			return "", fmt.Errorf("pushing %s to %s: credentials: %w", branch, r.FullName, err)
		}
		p.Auth = auth
	}
	return gitrepo.PushFiles(ctx, p)
}

// remote is the repository's git remote with the identity's credentials.
func (c *Client) remote(ctx context.Context, r forge.Repo) (gitrepo.Remote, error) {
	url, err := c.remoteURL(ctx, r)
	if err != nil {
		return gitrepo.Remote{}, err
	}
	rm := gitrepo.Remote{URL: url}
	if c.GitAuth != nil {
		auth, err := c.GitAuth(ctx)
		if err != nil {
			return rm, fmt.Errorf("git credentials for %s: %w", r.FullName, err)
		}
		rm.Auth = auth
	}
	return rm, nil
}

// DeleteBranch implements forge.Pusher with a git push carrying a lease on
// expectedSHA: GitHub's REST ref deletion has no such condition.
func (c *Client) DeleteBranch(ctx context.Context, r forge.Repo, branch, expectedSHA string) error {
	rm, err := c.remote(ctx, r)
	if err != nil {
		return err
	}
	return rm.DeleteBranch(ctx, branch, expectedSHA)
}

// ReadTree implements forge.TreeReader with one git fetch.
func (c *Client) ReadTree(ctx context.Context, r forge.Repo, ref, dir string) (forge.Snapshot, error) {
	rm, err := c.remote(ctx, r)
	if err != nil {
		return forge.Snapshot{}, err
	}
	return rm.ReadTree(ctx, ref, dir)
}

// OpenChange implements forge.ChangeWriter; labels are added after the pull
// request exists, as GitHub's create call has no labels field.
func (c *Client) OpenChange(ctx context.Context, r forge.Repo, s forge.ChangeSpec) (forge.Change, error) {
	owner, name, err := split(r)
	if err != nil {
		return forge.Change{}, err
	}
	op := fmt.Sprintf("opening a pull request from %s in %s", s.Head, r.FullName)
	pr, _, err := c.gh.PullRequests.Create(ctx, owner, name, &gh.NewPullRequest{
		Title: gh.String(s.Title), Head: gh.String(s.Head), Base: gh.String(s.Base), Body: gh.String(s.Body), Draft: gh.Bool(s.Draft),
	})
	if err != nil {
		if isInvalidField(err, "head") {
			return forge.Change{}, fmt.Errorf("%s: %w: head branch %q", op, forge.ErrNotFound, s.Head)
		}
		return forge.Change{}, apiError(op, unprocessable(err, "A pull request already exists", forge.ErrConflict))
	}
	if len(s.Labels) > 0 {
		labels, err := c.setLabels(ctx, owner, name, pr.GetNumber(), s.Labels)
		if err != nil {
			return change(pr), apiError(fmt.Sprintf("labelling %s#%d", r.FullName, pr.GetNumber()), err)
		}
		pr.Labels = labels
	}
	return change(pr), nil
}

// setLabels replaces an issue's labels. go-github sends a bare array,
// which GitHub's API description does not allow (the body is an object
// with "labels", of at least one item), so the request is built here; no
// labels is the DELETE call.
func (c *Client) setLabels(ctx context.Context, owner, name string, number int, labels []string) ([]*gh.Label, error) {
	u := fmt.Sprintf("repos/%s/%s/issues/%d/labels", owner, name, number)
	if len(labels) == 0 {
		req, err := c.gh.NewRequest(http.MethodDelete, u, nil)
		if err != nil {
			return nil, err
		}
		_, err = c.gh.Do(ctx, req, nil)
		return nil, err
	}
	req, err := c.gh.NewRequest(http.MethodPut, u, map[string][]string{"labels": labels})
	if err != nil {
		return nil, err
	}
	var out []*gh.Label
	_, err = c.gh.Do(ctx, req, &out)
	return out, err
}

// UpdateChange implements forge.ChangeWriter. Draft ↔ ready has no REST call:
// it goes through GraphQL with the pull request's node id.
func (c *Client) UpdateChange(ctx context.Context, r forge.Repo, number int, u forge.ChangeUpdate) (forge.Change, error) {
	owner, name, err := split(r)
	if err != nil {
		return forge.Change{}, err
	}
	op := fmt.Sprintf("updating %s#%d", r.FullName, number)
	pr, _, err := c.gh.PullRequests.Get(ctx, owner, name, number)
	if err != nil {
		return forge.Change{}, apiError(op, err)
	}
	if u.Title != nil || u.Body != nil {
		if pr, _, err = c.gh.PullRequests.Edit(ctx, owner, name, number, &gh.PullRequest{Title: u.Title, Body: u.Body}); err != nil {
			return forge.Change{}, apiError(op, err)
		}
	}
	if u.Labels != nil {
		labels, err := c.setLabels(ctx, owner, name, number, u.Labels)
		if err != nil {
			return forge.Change{}, apiError(op, err)
		}
		pr.Labels = labels
	}
	if u.Draft != nil && *u.Draft != pr.GetDraft() {
		mutation := "markPullRequestReadyForReview"
		if *u.Draft {
			mutation = "convertPullRequestToDraft"
		}
		if err := c.graphql(ctx, fmt.Sprintf(`mutation($id: ID!) { %s(input: {pullRequestId: $id}) { pullRequest { isDraft } } }`, mutation),
			map[string]any{"id": pr.GetNodeID()}); err != nil {
			return forge.Change{}, fmt.Errorf("%s: %s: %w", op, mutation, err)
		}
		pr.Draft = u.Draft
	}
	return change(pr), nil
}

// graphql runs one GraphQL mutation against the API root's /graphql (for
// GitHub Enterprise Server: /api/graphql next to /api/v3).
func (c *Client) graphql(ctx context.Context, query string, vars map[string]any) error {
	endpoint := "graphql"
	if strings.HasSuffix(c.gh.BaseURL.Path, "/api/v3/") {
		endpoint = "../graphql"
	}
	req, err := c.gh.NewRequest(http.MethodPost, endpoint, map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	var out struct {
		Errors []struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if _, err := c.gh.Do(ctx, req, &out); err != nil {
		return apiError("GraphQL", err)
	}
	if len(out.Errors) > 0 {
		msgs := make([]string, len(out.Errors))
		for i, e := range out.Errors {
			msgs[i] = e.Message
		}
		if out.Errors[0].Type == "NOT_FOUND" {
			return fmt.Errorf("%w: %s", forge.ErrNotFound, strings.Join(msgs, "; "))
		}
		return fmt.Errorf("GraphQL: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// CloseChange implements forge.ChangeWriter.
func (c *Client) CloseChange(ctx context.Context, r forge.Repo, number int) error {
	owner, name, err := split(r)
	if err != nil {
		return err
	}
	if _, _, err := c.gh.PullRequests.Edit(ctx, owner, name, number, &gh.PullRequest{State: gh.String("closed")}); err != nil {
		return apiError(fmt.Sprintf("closing %s#%d", r.FullName, number), err)
	}
	return nil
}

// Merge implements forge.ChangeWriter. GitHub refuses the merge with 409 ("Head
// branch was modified": ErrConflict) when the head is no longer
// expectedHeadSHA, and with 405 (ErrNotMergeable, GitHub's reason kept)
// when the pull request cannot be merged: a draft, failing protections,
// required checks, conflicts. Nothing is merged either way.
func (c *Client) Merge(ctx context.Context, r forge.Repo, number int, expectedHeadSHA, method string) (string, error) {
	owner, name, err := split(r)
	if err != nil {
		return "", err
	}
	if expectedHeadSHA == "" {
		return "", fmt.Errorf("merging %s#%d: the approved head SHA is required", r.FullName, number)
	}
	op := fmt.Sprintf("merging %s#%d at %s", r.FullName, number, expectedHeadSHA)
	res, _, err := c.gh.PullRequests.Merge(ctx, owner, name, number, "", &gh.PullRequestOptions{SHA: expectedHeadSHA, MergeMethod: method})
	if err != nil {
		return "", apiError(op, err)
	}
	if !res.GetMerged() {
		return "", fmt.Errorf("%s: %w: %s", op, forge.ErrNotMergeable, res.GetMessage())
	}
	return res.GetSHA(), nil
}

// CreateTag implements forge.Tagger with an annotated tag object and its
// ref. An existing ref at the same commit (a retry) is success; at another
// commit it is ErrConflict, and the published tag is never moved.
func (c *Client) CreateTag(ctx context.Context, r forge.Repo, tagName, sha, message string) error {
	owner, name, err := split(r)
	if err != nil {
		return err
	}
	op := fmt.Sprintf("tagging %s as %s in %s", sha, tagName, r.FullName)
	obj, _, err := c.gh.Git.CreateTag(ctx, owner, name, &gh.Tag{
		Tag: gh.String(tagName), Message: gh.String(message), Object: &gh.GitObject{SHA: gh.String(sha), Type: gh.String("commit")},
	})
	if err != nil {
		return apiError(op, unprocessable(err, "", forge.ErrNotFound))
	}
	_, _, err = c.gh.Git.CreateRef(ctx, owner, name, &gh.Reference{Ref: gh.String("refs/tags/" + tagName), Object: &gh.GitObject{SHA: obj.SHA}})
	if err == nil {
		return nil
	}
	if !isUnprocessable(err, "Reference already exists") {
		return apiError(op, err)
	}
	cur, err := c.peeledTag(ctx, owner, name, tagName)
	if err != nil {
		return apiError(op, err)
	}
	if cur != sha {
		return fmt.Errorf("%s: %w: tag %s already points at %s", op, forge.ErrConflict, tagName, cur)
	}
	return nil
}

// peeledTag returns the commit a tag ref points at, through its tag object
// when annotated.
func (c *Client) peeledTag(ctx context.Context, owner, name, tagName string) (string, error) {
	ref, _, err := c.gh.Git.GetRef(ctx, owner, name, "tags/"+tagName)
	if err != nil {
		return "", err
	}
	if ref.GetObject().GetType() != "tag" {
		return ref.GetObject().GetSHA(), nil
	}
	tag, _, err := c.gh.Git.GetTag(ctx, owner, name, ref.GetObject().GetSHA())
	if err != nil {
		return "", err
	}
	return tag.GetObject().GetSHA(), nil
}

// unprocessableErr returns GitHub's 422 answer, or nil for anything else.
func unprocessableErr(err error) *gh.ErrorResponse {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusUnprocessableEntity {
		return nil
	}
	return er
}

// isUnprocessable reports a 422 whose message or error details contain
// text ("" matches any 422).
func isUnprocessable(err error, text string) bool {
	er := unprocessableErr(err)
	if er == nil {
		return false
	}
	if strings.Contains(er.Message, text) {
		return true
	}
	for _, e := range er.Errors {
		if strings.Contains(e.Message, text) {
			return true
		}
	}
	return false
}

// isInvalidField reports GitHub's 422 for a field that names nothing, such
// as a head branch that does not exist.
func isInvalidField(err error, field string) bool {
	er := unprocessableErr(err)
	if er == nil {
		return false
	}
	for _, e := range er.Errors {
		if e.Field == field && e.Code == "invalid" {
			return true
		}
	}
	return false
}

// unprocessable wraps sentinel onto a matching 422 so callers can test it.
func unprocessable(err error, text string, sentinel error) error {
	if isUnprocessable(err, text) {
		return fmt.Errorf("%w: %w", sentinel, err)
	}
	return err
}

// Comment implements forge.Commenter.
func (c *Client) Comment(ctx context.Context, r forge.Repo, number int, body string) (forge.Comment, error) {
	owner, name, err := split(r)
	if err != nil {
		return forge.Comment{}, err
	}
	cm, _, err := c.gh.Issues.CreateComment(ctx, owner, name, number, &gh.IssueComment{Body: gh.String(body)})
	if err != nil {
		return forge.Comment{}, apiError(fmt.Sprintf("commenting on %s#%d", r.FullName, number), err)
	}
	return forge.Comment{ID: cm.GetID(), Body: cm.GetBody(), Author: user(cm.GetUser())}, nil
}

// EditComment implements forge.Commenter; GitHub addresses comments by id
// alone, so number is not sent.
func (c *Client) EditComment(ctx context.Context, r forge.Repo, _ int, id int64, body string) error {
	owner, name, err := split(r)
	if err != nil {
		return err
	}
	if _, _, err := c.gh.Issues.EditComment(ctx, owner, name, id, &gh.IssueComment{Body: gh.String(body)}); err != nil {
		return apiError(fmt.Sprintf("editing comment %d in %s", id, r.FullName), err)
	}
	return nil
}

// React implements forge.Commenter with GitHub's reaction names (+1, -1,
// laugh, confused, heart, hooray, rocket, eyes).
func (c *Client) React(ctx context.Context, r forge.Repo, _ int, commentID int64, reaction string) error {
	owner, name, err := split(r)
	if err != nil {
		return err
	}
	if _, _, err := c.gh.Reactions.CreateIssueCommentReaction(ctx, owner, name, commentID, reaction); err != nil {
		return apiError(fmt.Sprintf("reacting %s to comment %d in %s", reaction, commentID, r.FullName), err)
	}
	return nil
}

// maxAnnotations is GitHub's limit of annotations per check-run request.
const maxAnnotations = 50

// Dispatch implements forge.Dispatcher with repository_dispatch.
func (c *Client) Dispatch(ctx context.Context, r forge.Repo, eventType string, payload map[string]any) error {
	owner, name, err := split(r)
	if err != nil {
		return err
	}
	if eventType == "" {
		return fmt.Errorf("dispatch to %s: event type is required", r.FullName)
	}
	opts := gh.DispatchRequestOptions{EventType: eventType}
	if payload != nil {
		raw, err := jsonRaw(payload)
		if err != nil {
			return fmt.Errorf("dispatch to %s: encoding payload: %w", r.FullName, err)
		}
		opts.ClientPayload = &raw
	}
	if _, _, err := c.gh.Repositories.Dispatch(ctx, owner, name, opts); err != nil {
		return apiError(fmt.Sprintf("dispatching %s to %s", eventType, r.FullName), err)
	}
	return nil
}

func jsonRaw(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	return json.RawMessage(b), err
}

// Every role forge.Compose looks for, checked at compile time.
var (
	_ forge.FileReader   = (*Client)(nil)
	_ forge.TreeReader   = (*Client)(nil)
	_ forge.CommitLogger = (*Client)(nil)
	_ forge.RefLister    = (*Client)(nil)
	_ forge.Pusher       = (*Client)(nil)
	_ forge.ChangeReader = (*Client)(nil)
	_ forge.ChangeWriter = (*Client)(nil)
	_ forge.Tagger       = (*Client)(nil)
	_ forge.Commenter    = (*Client)(nil)
	_ forge.Issues       = (*Client)(nil)
	_ forge.Teams        = (*Client)(nil)
	_ forge.Permissions  = (*Client)(nil)
	_ forge.Checks       = (*Client)(nil)
	_ forge.Dispatcher   = (*Client)(nil)
	_ forge.RepoLister   = (*Client)(nil)
)

// Log implements forge.CommitLogger over git (one fetch, no REST calls).
func (c *Client) Log(ctx context.Context, r forge.Repo, from, to string) ([]forge.Commit, error) {
	rm, err := c.remote(ctx, r)
	if err != nil {
		return nil, err
	}
	return rm.Log(ctx, from, to)
}
