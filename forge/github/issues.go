package github

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/kptbot/kptbot/forge"
)

// ListOpenChanges implements forge.ChangeReader: every open pull request, for
// resync.
func (c *Client) ListOpenChanges(ctx context.Context, r forge.Repo) ([]forge.Change, error) {
	owner, name, err := split(r)
	if err != nil {
		return nil, err
	}
	var out []forge.Change
	err = paginate(func(opt gh.ListOptions) (*gh.Response, error) {
		prs, resp, err := c.gh.PullRequests.List(ctx, owner, name, &gh.PullRequestListOptions{State: "open", ListOptions: opt})
		for _, pr := range prs {
			out = append(out, change(pr))
		}
		return resp, err
	})
	if err != nil {
		return nil, apiError("listing open pull requests in "+r.FullName, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// GetChange implements forge.ChangeReader.
func (c *Client) GetChange(ctx context.Context, r forge.Repo, number int) (forge.Change, error) {
	owner, name, err := split(r)
	if err != nil {
		return forge.Change{}, err
	}
	pr, _, err := c.gh.PullRequests.Get(ctx, owner, name, number)
	if err != nil {
		return forge.Change{}, apiError(fmt.Sprintf("reading %s#%d", r.FullName, number), err)
	}
	return change(pr), nil
}

// ListComments implements forge.Commenter (issue comments: the
// conversation, where commands and the bot's replies live).
func (c *Client) ListComments(ctx context.Context, r forge.Repo, number int) ([]forge.Comment, error) {
	owner, name, err := split(r)
	if err != nil {
		return nil, err
	}
	var out []forge.Comment
	err = paginate(func(opt gh.ListOptions) (*gh.Response, error) {
		cs, resp, err := c.gh.Issues.ListComments(ctx, owner, name, number, &gh.IssueListCommentsOptions{ListOptions: opt})
		for _, cm := range cs {
			out = append(out, forge.Comment{ID: cm.GetID(), Body: cm.GetBody(), Author: user(cm.GetUser()), CreatedAt: cm.GetCreatedAt().Time,
				Edited: cm.UpdatedAt != nil && cm.CreatedAt != nil && cm.UpdatedAt.After(cm.CreatedAt.Time)})
		}
		return resp, err
	})
	if err != nil {
		return nil, apiError(fmt.Sprintf("listing comments of %s#%d", r.FullName, number), err)
	}
	return out, nil
}

// ListIssues implements forge.Issues. GitHub's issue list includes pull
// requests; they are left out.
func (c *Client) ListIssues(ctx context.Context, r forge.Repo, label string) ([]forge.Issue, error) {
	owner, name, err := split(r)
	if err != nil {
		return nil, err
	}
	var out []forge.Issue
	err = paginate(func(opt gh.ListOptions) (*gh.Response, error) {
		is, resp, err := c.gh.Issues.ListByRepo(ctx, owner, name, &gh.IssueListByRepoOptions{State: "open", Labels: []string{label}, ListOptions: opt})
		for _, i := range is {
			if !i.IsPullRequest() {
				out = append(out, issue(i))
			}
		}
		return resp, err
	})
	if err != nil {
		return nil, apiError(fmt.Sprintf("listing issues labelled %s in %s", label, r.FullName), err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

func issue(i *gh.Issue) forge.Issue {
	return forge.Issue{Number: i.GetNumber(), Title: i.GetTitle(), Body: i.GetBody(), URL: i.GetHTMLURL()}
}

// OpenIssue implements forge.Issues.
func (c *Client) OpenIssue(ctx context.Context, r forge.Repo, title, body string, labels []string) (forge.Issue, error) {
	owner, name, err := split(r)
	if err != nil {
		return forge.Issue{}, err
	}
	req := &gh.IssueRequest{Title: gh.String(title), Body: gh.String(body)}
	if len(labels) > 0 {
		req.Labels = &labels
	}
	i, _, err := c.gh.Issues.Create(ctx, owner, name, req)
	if err != nil {
		return forge.Issue{}, apiError(fmt.Sprintf("opening issue %q in %s", title, r.FullName), err)
	}
	return issue(i), nil
}

// EditIssue implements forge.Issues.
func (c *Client) EditIssue(ctx context.Context, r forge.Repo, number int, title, body string) error {
	owner, name, err := split(r)
	if err != nil {
		return err
	}
	if _, _, err := c.gh.Issues.Edit(ctx, owner, name, number, &gh.IssueRequest{Title: gh.String(title), Body: gh.String(body)}); err != nil {
		return apiError(fmt.Sprintf("editing issue %s#%d", r.FullName, number), err)
	}
	return nil
}

// TeamMember implements forge.Teams for team "org/slug": an active
// membership counts, a pending invitation does not.
func (c *Client) TeamMember(ctx context.Context, _ forge.Repo, team, login string) (bool, error) {
	org, slug, ok := strings.Cut(team, "/")
	if !ok || org == "" || slug == "" || strings.Contains(slug, "/") {
		return false, fmt.Errorf("team %q: want org/team-slug", team)
	}
	m, _, err := c.gh.Teams.GetTeamMembershipBySlug(ctx, org, slug, login)
	if err != nil {
		err = apiError(fmt.Sprintf("reading %s's membership of %s", login, team), err)
		if errors.Is(err, forge.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	return m.GetState() == "active", nil
}

// Self returns the account a token acts as (GET /user). Installation
// tokens have no user: GitHub refuses, and the caller must be told the
// login (an App's is its slug + "[bot]").
func (c *Client) Self(ctx context.Context) (forge.User, error) {
	u, _, err := c.gh.Users.Get(ctx, "")
	if err != nil {
		return forge.User{}, apiError("reading the token's user", err)
	}
	return user(u), nil
}
