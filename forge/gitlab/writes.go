package gitlab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitrepo"
)

// PushFiles implements forge.Pusher with one git push to the project's
// clone URL, as a compare-and-swap on the branch's old SHA.
func (c *Client) PushFiles(ctx context.Context, r forge.Repo, branch, oldSHA, base string, files map[string][]byte, message string) (string, error) {
	rem, err := c.remote(ctx, r)
	if err != nil {
		return "", err
	}
	return gitrepo.PushFiles(ctx, gitrepo.Push{URL: rem.URL, Auth: rem.Auth, Branch: branch, OldSHA: oldSHA, Base: base,
		Files: files, Message: message, Author: c.Author})
}

// DeleteBranch implements forge.Pusher over git, leased on expectedSHA:
// GitLab's REST branch deletion has no expected SHA, so a commit pushed in
// between would be lost.
func (c *Client) DeleteBranch(ctx context.Context, r forge.Repo, branch, expectedSHA string) error {
	rem, err := c.remote(ctx, r)
	if err != nil {
		return err
	}
	return rem.DeleteBranch(ctx, branch, expectedSHA)
}

// CreateTag implements forge.Tagger with an annotated tag (a message is
// what makes GitLab create one; the tag name stands in for an empty
// message). GitLab answers 400 "already exists" for an existing tag: at
// sha that is success, elsewhere ErrConflict, and the tag never moves.
func (c *Client) CreateTag(ctx context.Context, r forge.Repo, name, sha, message string) error {
	id, err := pid(r)
	if err != nil {
		return err
	}
	op := fmt.Sprintf("tagging %s as %s in %s", sha, name, r.FullName)
	if message == "" {
		message = name
	}
	_, _, err = c.gl.Tags.CreateTag(id, &gl.CreateTagOptions{TagName: gl.Ptr(name), Ref: gl.Ptr(sha), Message: gl.Ptr(message)}, ctxOpt(ctx))
	if err == nil {
		return nil
	}
	if _, ok := rejected(err, []int{http.StatusBadRequest}, "already exists"); !ok {
		if er, ok := rejected(err, []int{http.StatusBadRequest}, "invalid"); ok {
			return fmt.Errorf("%s: %w: %s", op, forge.ErrNotFound, er.Message)
		}
		return c.apiError(op, err)
	}
	tag, _, err := c.gl.Tags.GetTag(id, name, ctxOpt(ctx))
	if err != nil {
		return c.apiError(op, err)
	}
	if tag.Commit == nil || tag.Commit.ID != sha {
		cur := ""
		if tag.Commit != nil {
			cur = tag.Commit.ID
		}
		return fmt.Errorf("%s: %w: tag %s already points at %s", op, forge.ErrConflict, name, cur)
	}
	return nil
}

// Comment implements forge.Commenter with a merge request note.
func (c *Client) Comment(ctx context.Context, r forge.Repo, number int, body string) (forge.Comment, error) {
	id, err := pid(r)
	if err != nil {
		return forge.Comment{}, err
	}
	n, _, err := c.gl.Notes.CreateMergeRequestNote(id, int64(number), &gl.CreateMergeRequestNoteOptions{Body: gl.Ptr(inertText(body))}, ctxOpt(ctx))
	if err != nil {
		return forge.Comment{}, c.apiError(fmt.Sprintf("commenting on %s!%d", r.FullName, number), err)
	}
	return comment(n), nil
}

func comment(n *gl.Note) forge.Comment {
	edited := n.CreatedAt != nil && n.UpdatedAt != nil && n.UpdatedAt.After(*n.CreatedAt)
	c := forge.Comment{ID: n.ID, Body: n.Body, Author: user(n.Author.Username, n.Author.ID), Edited: edited}
	if n.CreatedAt != nil {
		c.CreatedAt = *n.CreatedAt
	}
	return c
}

// ListComments implements forge.Commenter: the merge request's notes,
// oldest first, without GitLab's system notes ("added 1 commit",
// "approved this merge request", ...).
func (c *Client) ListComments(ctx context.Context, r forge.Repo, number int) ([]forge.Comment, error) {
	id, err := pid(r)
	if err != nil {
		return nil, err
	}
	opt := &gl.ListMergeRequestNotesOptions{ListOptions: perPage, OrderBy: gl.Ptr("created_at"), Sort: gl.Ptr("asc")}
	notes, err := collect(func(p gl.RequestOptionFunc) ([]*gl.Note, *gl.Response, error) {
		return c.gl.Notes.ListMergeRequestNotes(id, int64(number), opt, ctxOpt(ctx), p)
	})
	if err != nil {
		return nil, c.apiError(fmt.Sprintf("listing comments of %s!%d", r.FullName, number), err)
	}
	var out []forge.Comment
	for _, n := range notes {
		if !n.System {
			out = append(out, comment(n))
		}
	}
	return out, nil
}

// EditComment implements forge.Commenter.
func (c *Client) EditComment(ctx context.Context, r forge.Repo, number int, commentID int64, body string) error {
	id, err := pid(r)
	if err != nil {
		return err
	}
	if _, _, err := c.gl.Notes.UpdateMergeRequestNote(id, int64(number), commentID, &gl.UpdateMergeRequestNoteOptions{Body: gl.Ptr(inertText(body))}, ctxOpt(ctx)); err != nil {
		return c.apiError(fmt.Sprintf("editing note %d of %s!%d", commentID, r.FullName, number), err)
	}
	return nil
}

// emoji maps GitHub's reaction names onto GitLab's award emoji.
var emoji = map[string]string{
	"+1": "thumbsup", "-1": "thumbsdown", "laugh": "laughing", "confused": "confused",
	"heart": "heart", "hooray": "tada", "rocket": "rocket", "eyes": "eyes",
}

// React implements forge.Commenter with an award emoji on the note.
// GitLab answers 404 for an emoji the user already awarded; that is
// success when the note carries it, so reacting twice is harmless.
func (c *Client) React(ctx context.Context, r forge.Repo, number int, commentID int64, reaction string) error {
	id, err := pid(r)
	if err != nil {
		return err
	}
	name, ok := emoji[reaction]
	if !ok {
		return fmt.Errorf("reaction %q: want one of +1, -1, laugh, confused, heart, hooray, rocket, eyes", reaction)
	}
	op := fmt.Sprintf("reacting %s to note %d of %s!%d", name, commentID, r.FullName, number)
	_, _, err = c.gl.AwardEmoji.CreateMergeRequestAwardEmojiOnNote(id, int64(number), commentID, &gl.CreateAwardEmojiOptions{Name: name}, ctxOpt(ctx))
	if err == nil {
		return nil
	}
	if !errors.Is(err, gl.ErrNotFound) {
		return c.apiError(op, err)
	}
	me, _, uerr := c.gl.Users.CurrentUser(ctxOpt(ctx))
	if uerr != nil {
		return c.apiError(op, err)
	}
	awards, lerr := collect(func(p gl.RequestOptionFunc) ([]*gl.AwardEmoji, *gl.Response, error) {
		return c.gl.AwardEmoji.ListMergeRequestAwardEmojiOnNote(id, int64(number), commentID, &gl.ListAwardEmojiOptions{ListOptions: perPage}, ctxOpt(ctx), p)
	})
	if lerr != nil {
		return c.apiError(op, lerr)
	}
	for _, a := range awards {
		if a.Name == name && a.User.ID == me.ID {
			return nil
		}
	}
	return c.apiError(op, err)
}

// ListIssues implements forge.Issues: open issues carrying label.
func (c *Client) ListIssues(ctx context.Context, r forge.Repo, label string) ([]forge.Issue, error) {
	id, err := pid(r)
	if err != nil {
		return nil, err
	}
	opt := &gl.ListProjectIssuesOptions{ListOptions: perPage, State: gl.Ptr("opened"), Labels: gl.Ptr(gl.LabelOptions{label})}
	is, err := collect(func(p gl.RequestOptionFunc) ([]*gl.Issue, *gl.Response, error) {
		return c.gl.Issues.ListProjectIssues(id, opt, ctxOpt(ctx), p)
	})
	if err != nil {
		return nil, c.apiError(fmt.Sprintf("listing issues labelled %s in %s", label, r.FullName), err)
	}
	out := make([]forge.Issue, 0, len(is))
	for _, i := range is {
		out = append(out, issue(i))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

func issue(i *gl.Issue) forge.Issue {
	return forge.Issue{Number: int(i.IID), Title: i.Title, Body: i.Description, URL: i.WebURL}
}

// OpenIssue implements forge.Issues.
func (c *Client) OpenIssue(ctx context.Context, r forge.Repo, title, body string, labels []string) (forge.Issue, error) {
	id, err := pid(r)
	if err != nil {
		return forge.Issue{}, err
	}
	opt := &gl.CreateIssueOptions{Title: gl.Ptr(oneLine(title)), Description: gl.Ptr(inertText(body))}
	if len(labels) > 0 {
		opt.Labels = gl.Ptr(gl.LabelOptions(labels))
	}
	i, _, err := c.gl.Issues.CreateIssue(id, opt, ctxOpt(ctx))
	if err != nil {
		return forge.Issue{}, c.apiError(fmt.Sprintf("opening issue %q in %s", title, r.FullName), err)
	}
	return issue(i), nil
}

// EditIssue implements forge.Issues.
func (c *Client) EditIssue(ctx context.Context, r forge.Repo, number int, title, body string) error {
	id, err := pid(r)
	if err != nil {
		return err
	}
	opt := &gl.UpdateIssueOptions{Title: gl.Ptr(oneLine(title)), Description: gl.Ptr(inertText(body))}
	if _, _, err := c.gl.Issues.UpdateIssue(id, int64(number), opt, ctxOpt(ctx)); err != nil {
		return c.apiError(fmt.Sprintf("editing issue #%d of %s", number, r.FullName), err)
	}
	return nil
}

// ReportCheck implements forge.Checks with a commit status named r.Name:
// queued is pending, in_progress running, and a completed check success,
// failed or canceled; neutral (GitLab has none) is success with the word
// in the description. GitLab refuses to "move" a status to the state it
// is already in; that 400 is success.
func (c *Client) ReportCheck(ctx context.Context, r forge.Repo, rep forge.CheckReport) error {
	if err := rep.Validate(); err != nil {
		return err
	}
	id, err := pid(r)
	if err != nil {
		return err
	}
	state, err := commitState(rep)
	if err != nil {
		return err
	}
	desc := rep.Title
	if desc == "" {
		desc, _, _ = strings.Cut(rep.Summary, "\n")
	}
	if rep.Conclusion == forge.CheckNeutral {
		desc = strings.TrimSuffix("neutral: "+desc, ": ")
	}
	opt := &gl.SetCommitStatusOptions{State: state, Name: gl.Ptr(rep.Name)}
	if desc != "" {
		opt.Description = gl.Ptr(truncate(desc, 255))
	}
	if rep.DetailsURL != "" {
		opt.TargetURL = gl.Ptr(rep.DetailsURL)
	}
	op := fmt.Sprintf("reporting status %s on %s in %s", rep.Name, rep.HeadSHA, r.FullName)
	if c.statusThere(ctx, id, rep, opt) {
		return nil
	}
	if _, _, err := c.gl.Commits.SetCommitStatus(id, rep.HeadSHA, opt, ctxOpt(ctx)); err != nil {
		if _, ok := rejected(err, []int{http.StatusBadRequest}, "Cannot transition status"); ok {
			return nil
		}
		return c.apiError(op, err)
	}
	return nil
}

// statusThere reports whether the commit's latest status of rep's name
// already says what opt would (state, description, target URL): every
// resync renders each open change again, and a write is what the rate
// limits count, a read is not (GitLab would refuse the same state again
// with a 400 anyway). Any doubt (a failed read) writes.
func (c *Client) statusThere(ctx context.Context, id any, rep forge.CheckReport, opt *gl.SetCommitStatusOptions) bool {
	sts, _, err := c.gl.Commits.GetCommitStatuses(id, rep.HeadSHA, &gl.GetCommitStatusesOptions{Name: gl.Ptr(rep.Name)}, ctxOpt(ctx))
	if err != nil {
		return false
	}
	for _, st := range sts {
		if st.Name == rep.Name {
			return st.Status == string(opt.State) && st.Description == deref(opt.Description) && st.TargetURL == deref(opt.TargetURL)
		}
	}
	return false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// RequiredChecks implements forge.Checks: GitLab names no required
// statuses, but a project whose merge requests must have a successful
// pipeline counts every commit status (an external status forms the
// commit's pipeline), so then every check is required. The project is
// read once per client.
func (c *Client) RequiredChecks(ctx context.Context, r forge.Repo, _ string) ([]string, error) {
	p, err := c.project(ctx, r)
	if err != nil {
		return nil, err
	}
	if p.OnlyAllowMergeIfPipelineSucceeds {
		return []string{forge.AnyCheck}, nil
	}
	return nil, nil
}

func commitState(rep forge.CheckReport) (gl.BuildStateValue, error) {
	switch rep.Status {
	case forge.CheckQueued:
		return gl.Pending, nil
	case forge.CheckInProgress:
		return gl.Running, nil
	}
	switch rep.Conclusion {
	case forge.CheckSuccess, forge.CheckNeutral:
		return gl.Success, nil
	case forge.CheckFailure:
		return gl.Failed, nil
	case forge.CheckCancelled:
		return gl.Canceled, nil
	}
	return "", fmt.Errorf("check report %q: conclusion %q has no GitLab commit status (want success, failure, neutral or cancelled)", rep.Name, rep.Conclusion)
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// Dispatch implements forge.Dispatcher with a pipeline on the project's
// default branch carrying KPTBOT_EVENT (the event type) and KPTBOT_PAYLOAD
// (the payload as JSON). With a trigger token for the project
// (TriggerToken) it uses the pipeline trigger API, which needs no
// permission beyond the token; otherwise it creates the pipeline as the
// bot's user (Developer access). The project's .gitlab-ci.yml decides what
// runs, for example a job with rules: - if: $KPTBOT_EVENT.
func (c *Client) Dispatch(ctx context.Context, r forge.Repo, eventType string, payload map[string]any) error {
	id, err := pid(r)
	if err != nil {
		return err
	}
	if eventType == "" {
		return fmt.Errorf("dispatch to %s: event type is required", r.FullName)
	}
	op := fmt.Sprintf("dispatching %s to %s", eventType, r.FullName)
	raw := []byte("{}")
	if payload != nil {
		if raw, err = json.Marshal(payload); err != nil {
			return fmt.Errorf("%s: encoding payload: %w", op, err)
		}
	}
	ref := r.DefaultBranch
	if ref == "" {
		p, err := c.project(ctx, r)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if ref = p.DefaultBranch; ref == "" {
			return fmt.Errorf("%s: the project has no default branch (is it empty?)", op)
		}
	}
	vars := map[string]string{"KPTBOT_EVENT": eventType, "KPTBOT_PAYLOAD": string(raw)}
	if c.TriggerToken != nil {
		if tok, ok := c.TriggerToken(strings.Trim(r.FullName, "/")); ok && tok != "" {
			_, _, err := c.gl.PipelineTriggers.RunPipelineTrigger(id, &gl.RunPipelineTriggerOptions{Ref: gl.Ptr(ref), Token: gl.Ptr(tok), Variables: vars}, ctxOpt(ctx))
			if err != nil {
				return c.apiError(op+" (pipeline trigger)", err)
			}
			return nil
		}
	}
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var pv []*gl.PipelineVariableOptions
	for _, k := range keys {
		pv = append(pv, &gl.PipelineVariableOptions{Key: gl.Ptr(k), Value: gl.Ptr(vars[k]), VariableType: gl.Ptr(gl.EnvVariableType)})
	}
	if _, _, err := c.gl.Pipelines.CreatePipeline(id, &gl.CreatePipelineOptions{Ref: gl.Ptr(ref), Variables: &pv}, ctxOpt(ctx)); err != nil {
		return c.apiError(op+" (pipeline)", err)
	}
	return nil
}

// ReadComment returns note id of merge request number as GitLab stores it:
// its author and text from the API, not from a webhook payload, which one
// webhook token shared by every project (or a CI variable any Developer
// can set) vouches for. A system note, or a note on another merge
// request, is forge.ErrNotFound: it is no comment of a person's there.
func (c *Client) ReadComment(ctx context.Context, r forge.Repo, number int, id int64) (forge.Comment, error) {
	pr, err := pid(r)
	if err != nil {
		return forge.Comment{}, err
	}
	op := fmt.Sprintf("reading note %d of %s!%d", id, r.FullName, number)
	n, _, err := c.gl.Notes.GetMergeRequestNote(pr, int64(number), id, ctxOpt(ctx))
	if err != nil {
		return forge.Comment{}, c.apiError(op, err)
	}
	if n.System {
		return forge.Comment{}, fmt.Errorf("%s: %w: a system note", op, forge.ErrNotFound)
	}
	if n.NoteableIID != 0 && n.NoteableIID != int64(number) {
		return forge.Comment{}, fmt.Errorf("%s: %w: the note belongs to !%d", op, forge.ErrNotFound, n.NoteableIID)
	}
	return comment(n), nil
}
