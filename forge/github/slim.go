package github

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/forge"
)

// The hot events (push, pull_request, pull_request_review, issue_comment)
// are decoded into these slim shapes instead of go-github's full types:
// kptbot reads a dozen fields of payloads that run to 30 KB, and decoding
// only those is what lets one server keep up with a large fan-out. The
// field names are GitHub's webhook schema.

type slimUser struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"`
}

func (u slimUser) user() forge.User {
	return forge.User{Login: u.Login, ID: u.ID, Bot: u.Type == "Bot"}
}

type slimRepo struct {
	ID            int64    `json:"id"`
	FullName      string   `json:"full_name"`
	CloneURL      string   `json:"clone_url"`
	DefaultBranch string   `json:"default_branch"`
	Topics        []string `json:"topics"`
	Private       bool     `json:"private"`
}

func (r slimRepo) repo() forge.Repo {
	return forge.Repo{Forge: forge.GitHub, ID: r.ID, FullName: r.FullName, CloneURL: r.CloneURL,
		DefaultBranch: r.DefaultBranch, Topics: r.Topics, Private: r.Private}
}

type slimRef struct {
	Ref  string    `json:"ref"`
	SHA  string    `json:"sha"`
	Repo *slimRepo `json:"repo"`
}

type slimPR struct {
	Number         int      `json:"number"`
	Title          string   `json:"title"`
	Body           string   `json:"body"`
	Draft          bool     `json:"draft"`
	State          string   `json:"state"`
	Merged         bool     `json:"merged"`
	MergeCommitSHA string   `json:"merge_commit_sha"`
	HTMLURL        string   `json:"html_url"`
	User           slimUser `json:"user"`
	Labels         []struct {
		Name string `json:"name"`
	} `json:"labels"`
	Head slimRef `json:"head"`
	Base slimRef `json:"base"`
}

func (pr slimPR) change(base slimRepo) *forge.Change {
	c := &forge.Change{
		Number: pr.Number, Title: pr.Title, Body: pr.Body, Draft: pr.Draft, State: pr.State,
		HeadRef: pr.Head.Ref, HeadSHA: pr.Head.SHA, BaseRef: pr.Base.Ref, BaseSHA: pr.Base.SHA,
		Author: pr.User.user(), Merged: pr.Merged, MergeCommitSHA: pr.MergeCommitSHA, URL: pr.HTMLURL,
	}
	if c.Merged {
		c.State = "merged"
	}
	for _, l := range pr.Labels {
		c.Labels = append(c.Labels, l.Name)
	}
	if pr.Head.Repo != nil && pr.Head.Repo.ID != base.ID {
		c.FromFork = true
	}
	return c
}

// slimEvent is the union of the hot events' fields.
type slimEvent struct {
	Action       string    `json:"action"`
	Ref          string    `json:"ref"`
	Before       string    `json:"before"`
	After        string    `json:"after"`
	Deleted      bool      `json:"deleted"`
	Repository   *slimRepo `json:"repository"`
	Sender       slimUser  `json:"sender"`
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	PullRequest *slimPR `json:"pull_request"`
	Review      *struct {
		ID       int64    `json:"id"`
		State    string   `json:"state"`
		Body     string   `json:"body"`
		CommitID string   `json:"commit_id"`
		User     slimUser `json:"user"`
	} `json:"review"`
	Issue *struct {
		Number      int             `json:"number"`
		Title       string          `json:"title"`
		State       string          `json:"state"`
		HTMLURL     string          `json:"html_url"`
		User        slimUser        `json:"user"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	Comment *struct {
		ID   int64    `json:"id"`
		Body string   `json:"body"`
		User slimUser `json:"user"`
	} `json:"comment"`
}

// hotEvents are the events decoded the slim way.
var hotEvents = map[string]bool{"push": true, "pull_request": true, "pull_request_review": true, "issue_comment": true}

// normalizeHot normalizes a hot event.
func normalizeHot(ev forge.Event, body []byte) (forge.Event, error) {
	var p slimEvent
	if err := json.Unmarshal(body, &p); err != nil {
		return forge.Event{}, fmt.Errorf("%w: %s event: %v", forge.ErrBadPayload, ev.Raw, err)
	}
	if p.Repository == nil {
		return forge.Event{}, fmt.Errorf("%w: %s event without a repository", forge.ErrBadPayload, ev.Raw)
	}
	ev.Repo, ev.Sender, ev.InstallationID = p.Repository.repo(), p.Sender.user(), p.Installation.ID
	switch ev.Raw {
	case "push":
		return slimPush(ev, &p)
	case "pull_request":
		return slimPullRequest(ev, &p)
	case "pull_request_review":
		return slimReview(ev, &p)
	case "issue_comment":
		return slimComment(ev, &p)
	}
	return ev, nil
}

// ignored is ev acknowledged but not acted on, saying why.
func ignored(ev forge.Event, format string, args ...any) (forge.Event, error) {
	ev.Kind, ev.Ignored = forge.EventIgnored, fmt.Sprintf(format, args...)
	return ev, nil
}

// slimPush normalizes a push: to a branch or tag, or its deletion.
func slimPush(ev forge.Event, p *slimEvent) (forge.Event, error) {
	ev.Ref, ev.Before, ev.After = p.Ref, p.Before, p.After
	deleted := p.Deleted || p.After == forge.ZeroSHA
	switch {
	case strings.HasPrefix(p.Ref, "refs/tags/") && deleted:
		ev.Kind = forge.EventTagDeleted
	case strings.HasPrefix(p.Ref, "refs/tags/"):
		ev.Kind = forge.EventTagPushed
	case strings.HasPrefix(p.Ref, "refs/heads/") && deleted:
		ev.Kind = forge.EventBranchDeleted
	case strings.HasPrefix(p.Ref, "refs/heads/"):
		ev.Kind = forge.EventBranchPushed
	default:
		return ignored(ev, "push to %q", p.Ref)
	}
	return ev, nil
}

// slimPullRequest normalizes a pull_request event by its action.
func slimPullRequest(ev forge.Event, p *slimEvent) (forge.Event, error) {
	if p.PullRequest == nil {
		return forge.Event{}, fmt.Errorf("%w: pull_request event without a pull_request", forge.ErrBadPayload)
	}
	ev.Change = p.PullRequest.change(*p.Repository)
	switch p.Action {
	case "opened":
		ev.Kind = forge.EventChangeOpened
	case "edited", "labeled", "unlabeled":
		ev.Kind = forge.EventChangeEdited
	case "synchronize":
		ev.Kind, ev.Before, ev.After = forge.EventChangeSynchronized, p.Before, p.After
	case "closed":
		ev.Kind = forge.EventChangeClosed
		if p.PullRequest.Merged {
			ev.Kind = forge.EventChangeMerged
		}
	case "reopened":
		ev.Kind = forge.EventChangeReopened
	case "ready_for_review":
		ev.Kind = forge.EventChangeReadyForReview
	case "converted_to_draft":
		ev.Kind = forge.EventChangeConvertedToDraft
	default:
		return ignored(ev, "pull_request action %q", p.Action)
	}
	return ev, nil
}

// slimReview normalizes a pull_request_review event: a review submitted
// or dismissed.
func slimReview(ev forge.Event, p *slimEvent) (forge.Event, error) {
	if p.PullRequest == nil || p.Review == nil {
		return forge.Event{}, fmt.Errorf("%w: pull_request_review event without a pull_request or review", forge.ErrBadPayload)
	}
	ev.Change = p.PullRequest.change(*p.Repository)
	rv := p.Review
	ev.Review = &forge.Review{ID: rv.ID, Reviewer: rv.User.user(), CommitSHA: rv.CommitID, Body: rv.Body}
	switch p.Action {
	case "submitted":
		ev.Kind = forge.EventReviewSubmitted
		switch strings.ToLower(rv.State) {
		case "approved":
			ev.Review.State = forge.ReviewApproved
		case "changes_requested":
			ev.Review.State = forge.ReviewChangesRequested
		default:
			ev.Review.State = forge.ReviewCommented
		}
	case "dismissed":
		ev.Kind, ev.Review.State = forge.EventReviewDismissed, forge.ReviewDismissed
	default:
		return ignored(ev, "pull_request_review action %q", p.Action)
	}
	return ev, nil
}

// slimComment normalizes an issue_comment event: only comments on pull requests count.
func slimComment(ev forge.Event, p *slimEvent) (forge.Event, error) {
	if p.Issue == nil || p.Comment == nil {
		return forge.Event{}, fmt.Errorf("%w: issue_comment event without an issue or comment", forge.ErrBadPayload)
	}
	if len(p.Issue.PullRequest) == 0 || string(p.Issue.PullRequest) == "null" {
		return ignored(ev, "comment on issue #%d, not on a pull request", p.Issue.Number)
	}
	is := p.Issue
	ev.Change = &forge.Change{Number: is.Number, Title: is.Title, State: is.State, Author: is.User.user(), URL: is.HTMLURL}
	ev.Comment = &forge.Comment{ID: p.Comment.ID, Body: p.Comment.Body, Author: p.Comment.User.user()}
	switch p.Action {
	case "created":
		ev.Kind = forge.EventCommentCreated
	case "edited":
		ev.Kind, ev.Comment.Edited = forge.EventCommentEdited, true
	default:
		return ignored(ev, "issue_comment action %q", p.Action)
	}
	return ev, nil
}
