package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	gh "github.com/google/go-github/v60/github"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/ratelimit"
)

// Client is the GitHub adapter: the forge roles over GitHub's REST API,
// through go-github. This file holds the read side; every list follows the
// Link header to the last page.
type Client struct {
	gh   *gh.Client
	hook *hookTransport
	// GitAuth returns the credentials for pushes over HTTPS (for an App,
	// the installation token as user x-access-token); nil pushes without.
	GitAuth func(ctx context.Context) (transport.AuthMethod, error)
	// Author signs the commits PushFiles makes.
	Author object.Signature
	// GitURL prefixes owner/name.git: the configured host's git URL for a
	// repository (see remoteURL).
	GitURL string
	// Scheduler is the identity's write scheduler when the constructor set
	// one up (NewAppClient, NewTokenClient), for its Stats.
	Scheduler *ratelimit.Scheduler

	cloneMu   sync.Mutex
	cloneURLs map[string]string // the API's clone_url, by lower-case owner/name
}

// NewClient returns an adapter sending requests with httpClient (which
// carries the authentication: an App installation transport or a token).
// baseURL is empty for github.com, or a GitHub Enterprise Server API root
// such as https://ghe.example.com/api/v3/.
func NewClient(httpClient *http.Client, baseURL string) (*Client, error) {
	// go-github copies the client it is given, so the transport is reached
	// through a hook that Instrument can wrap later.
	hc := &http.Client{}
	if httpClient != nil {
		*hc = *httpClient
	}
	hook := &hookTransport{next: hc.Transport}
	if hook.next == nil {
		hook.next = http.DefaultTransport
	}
	hc.Transport = hook
	c := gh.NewClient(hc)
	gitURL := "https://github.com/"
	if baseURL != "" {
		u, err := url.Parse(strings.TrimSuffix(baseURL, "/") + "/")
		if err != nil {
			return nil, fmt.Errorf("GitHub API base URL %q: %w", baseURL, err)
		}
		c.BaseURL = u
		// GitHub Enterprise Server serves git at the host's root.
		gitURL = strings.TrimSuffix(strings.TrimSuffix(u.String(), "/"), "/api/v3") + "/"
	}
	return &Client{gh: c, hook: hook, GitURL: gitURL, Author: object.Signature{Name: "kptbot[bot]", Email: "kptbot[bot]@users.noreply.github.com"}}, nil
}

func split(r forge.Repo) (owner, name string, err error) {
	owner, name, ok := strings.Cut(r.FullName, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("GitHub repository %q: want owner/name", r.FullName)
	}
	return owner, name, nil
}

// apiError turns a go-github error into the forge sentinels, keeping the
// operation and GitHub's message.
func apiError(op string, err error) error {
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		return fmt.Errorf("%s: %w", op, &forge.RateLimitError{RetryAt: rl.Rate.Reset.Time, Reason: "GitHub primary rate limit"})
	}
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &abuse) {
		wait := time.Minute
		if abuse.RetryAfter != nil {
			wait = *abuse.RetryAfter
		}
		return fmt.Errorf("%s: %w", op, &forge.RateLimitError{RetryAt: time.Now().Add(wait), Reason: "GitHub secondary rate limit"})
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		switch er.Response.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("%s: %w: %s", op, forge.ErrNotFound, er.Message)
		case http.StatusConflict:
			// A ref or head moved; nothing was written.
			return fmt.Errorf("%s: %w: %s", op, forge.ErrConflict, er.Message)
		case http.StatusMethodNotAllowed:
			// GitHub will not merge (draft, protections, checks).
			return fmt.Errorf("%s: %w: %s", op, forge.ErrNotMergeable, er.Message)
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("%s: %w: %s", op, forge.ErrPermission, er.Message)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// paginate calls page with ListOptions for each page until GitHub's Link
// header says there is no next one.
func paginate(page func(opt gh.ListOptions) (*gh.Response, error)) error {
	opt := gh.ListOptions{PerPage: 100}
	for {
		resp, err := page(opt)
		if err != nil {
			return err
		}
		if resp == nil || resp.NextPage == 0 {
			return nil
		}
		opt.Page = resp.NextPage
	}
}

// ReadFile implements forge.FileReader. Files over 1 MB come without
// content from the contents API and are read as blobs.
func (c *Client) ReadFile(ctx context.Context, r forge.Repo, ref, path string) ([]byte, error) {
	owner, name, err := split(r)
	if err != nil {
		return nil, err
	}
	op := fmt.Sprintf("reading %s at %s in %s", path, ref, r.FullName)
	file, _, _, err := c.gh.Repositories.GetContents(ctx, owner, name, path, &gh.RepositoryContentGetOptions{Ref: ref})
	if err != nil {
		return nil, apiError(op, err)
	}
	if file == nil {
		return nil, fmt.Errorf("%s: %w: it is a directory", op, forge.ErrNotFound)
	}
	if file.GetEncoding() == "none" || (file.Content == nil && file.GetSize() > 0) {
		b, _, err := c.gh.Git.GetBlobRaw(ctx, owner, name, file.GetSHA())
		if err != nil {
			return nil, apiError(op, err)
		}
		return b, nil
	}
	s, err := file.GetContent()
	if err != nil {
		return nil, fmt.Errorf("%s: decoding content: %w", op, err)
	}
	return []byte(s), nil
}

// ListTree implements forge.FileReader with one recursive tree read; a
// tree GitHub truncates is an error rather than a silently short list.
func (c *Client) ListTree(ctx context.Context, r forge.Repo, ref, dir string) ([]string, error) {
	owner, name, err := split(r)
	if err != nil {
		return nil, err
	}
	op := fmt.Sprintf("listing %s at %s in %s", dir, ref, r.FullName)
	tree, _, err := c.gh.Git.GetTree(ctx, owner, name, ref, true)
	if err != nil {
		return nil, apiError(op, err)
	}
	if tree.GetTruncated() {
		return nil, fmt.Errorf("%s: GitHub truncated the tree (over 100,000 entries); list a smaller directory", op)
	}
	prefix := strings.Trim(dir, "/")
	if prefix != "" {
		prefix += "/"
	}
	var out []string
	for _, e := range tree.Entries {
		if e.GetType() == "blob" && strings.HasPrefix(e.GetPath(), prefix) {
			out = append(out, e.GetPath())
		}
	}
	sort.Strings(out)
	return out, nil
}

// ListTags implements forge.RefLister; the tags API gives the commit each
// tag peels to, so annotated tags cost no extra request.
func (c *Client) ListTags(ctx context.Context, r forge.Repo) ([]forge.Tag, error) {
	owner, name, err := split(r)
	if err != nil {
		return nil, err
	}
	var out []forge.Tag
	err = paginate(func(opt gh.ListOptions) (*gh.Response, error) {
		tags, resp, err := c.gh.Repositories.ListTags(ctx, owner, name, &opt)
		for _, t := range tags {
			out = append(out, forge.Tag{Name: t.GetName(), SHA: t.GetCommit().GetSHA()})
		}
		return resp, err
	})
	if err != nil {
		return nil, apiError("listing tags of "+r.FullName, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ListBranches implements forge.RefLister.
func (c *Client) ListBranches(ctx context.Context, r forge.Repo) ([]forge.Branch, error) {
	owner, name, err := split(r)
	if err != nil {
		return nil, err
	}
	var out []forge.Branch
	err = paginate(func(opt gh.ListOptions) (*gh.Response, error) {
		bs, resp, err := c.gh.Repositories.ListBranches(ctx, owner, name, &gh.BranchListOptions{ListOptions: opt})
		for _, b := range bs {
			out = append(out, forge.Branch{Name: b.GetName(), SHA: b.GetCommit().GetSHA()})
		}
		return resp, err
	})
	if err != nil {
		return nil, apiError("listing branches of "+r.FullName, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ListChangesByHead implements part of forge.ChangeReader: pull requests of any
// state whose head is branch head in this repository.
func (c *Client) ListChangesByHead(ctx context.Context, r forge.Repo, head string) ([]forge.Change, error) {
	owner, name, err := split(r)
	if err != nil {
		return nil, err
	}
	var out []forge.Change
	err = paginate(func(opt gh.ListOptions) (*gh.Response, error) {
		prs, resp, err := c.gh.PullRequests.List(ctx, owner, name, &gh.PullRequestListOptions{Head: owner + ":" + head, State: "all", ListOptions: opt})
		for _, pr := range prs {
			out = append(out, change(pr))
		}
		return resp, err
	})
	if err != nil {
		return nil, apiError(fmt.Sprintf("listing pull requests from %s in %s", head, r.FullName), err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// change converts a REST pull request; webhook payloads have their own
// (slim) conversion.
func change(pr *gh.PullRequest) forge.Change {
	c := forge.Change{
		Number: pr.GetNumber(), Title: pr.GetTitle(), Body: pr.GetBody(), Draft: pr.GetDraft(), State: pr.GetState(),
		HeadRef: pr.GetHead().GetRef(), HeadSHA: pr.GetHead().GetSHA(), BaseRef: pr.GetBase().GetRef(), BaseSHA: pr.GetBase().GetSHA(),
		Author: user(pr.GetUser()), Merged: pr.GetMerged() || pr.MergedAt != nil, MergeCommitSHA: pr.GetMergeCommitSHA(), URL: pr.GetHTMLURL(),
		FromFork: pr.GetHead().GetRepo().GetFullName() != pr.GetBase().GetRepo().GetFullName(),
	}
	if c.Merged {
		c.State = "merged"
	}
	for _, l := range pr.Labels {
		c.Labels = append(c.Labels, l.GetName())
	}
	return c
}

// ListReviews implements part of forge.ChangeReader; each review keeps the
// commit it was given on, so an approval never carries over to a new head.
func (c *Client) ListReviews(ctx context.Context, r forge.Repo, number int) ([]forge.Review, error) {
	owner, name, err := split(r)
	if err != nil {
		return nil, err
	}
	var out []forge.Review
	err = paginate(func(opt gh.ListOptions) (*gh.Response, error) {
		rs, resp, err := c.gh.PullRequests.ListReviews(ctx, owner, name, number, &opt)
		for _, rv := range rs {
			out = append(out, forge.Review{ID: rv.GetID(), State: reviewState(rv.GetState()), Reviewer: user(rv.GetUser()),
				CommitSHA: rv.GetCommitID(), Body: rv.GetBody(), SubmittedAt: rv.GetSubmittedAt().Time})
		}
		return resp, err
	})
	if err != nil {
		return nil, apiError(fmt.Sprintf("listing reviews of %s#%d", r.FullName, number), err)
	}
	return out, nil
}

// reviewState maps GitHub's upper-case REST states (webhooks use lower case).
func reviewState(s string) forge.ReviewState {
	switch strings.ToLower(s) {
	case "approved":
		return forge.ReviewApproved
	case "changes_requested":
		return forge.ReviewChangesRequested
	case "dismissed":
		return forge.ReviewDismissed
	default:
		return forge.ReviewCommented
	}
}

// Permission implements forge.Permissions from the collaborator permission
// API; GitHub's finer roles (maintain, triage) are folded into its
// permission field, which is all kptbot authorizes on.
func (c *Client) Permission(ctx context.Context, r forge.Repo, login string) (forge.Permission, error) {
	owner, name, err := split(r)
	if err != nil {
		return "", err
	}
	op := fmt.Sprintf("reading %s's permission on %s", login, r.FullName)
	p, _, err := c.gh.Repositories.GetPermissionLevel(ctx, owner, name, login)
	if err != nil {
		err = apiError(op, err)
		// GitHub answers 404 for a user who is not a collaborator.
		if errors.Is(err, forge.ErrNotFound) {
			return forge.PermissionNone, nil
		}
		return "", err
	}
	switch perm := forge.Permission(p.GetPermission()); perm {
	case forge.PermissionAdmin, forge.PermissionWrite, forge.PermissionRead, forge.PermissionNone:
		return perm, nil
	default:
		return "", fmt.Errorf("%s: GitHub answered permission %q, want admin, write, read or none", op, p.GetPermission())
	}
}

// ListRepos implements forge.RepoLister for an App installation (or the
// Action's GITHUB_TOKEN, itself an installation token); a personal access
// token, which GitHub refuses the installation endpoint, lists the
// repositories its user owns, collaborates on or sees through an
// organization.
func (c *Client) ListRepos(ctx context.Context) ([]forge.Repo, error) {
	var out []forge.Repo
	err := paginate(func(opt gh.ListOptions) (*gh.Response, error) {
		rs, resp, err := c.gh.Apps.ListRepos(ctx, &opt)
		if rs != nil {
			for _, r := range rs.Repositories {
				out = append(out, repo(r))
			}
		}
		return resp, err
	})
	if err != nil {
		err = apiError("listing the installation's repositories", err)
		if !errors.Is(err, forge.ErrPermission) {
			return nil, err
		}
		out = nil
		err = paginate(func(opt gh.ListOptions) (*gh.Response, error) {
			rs, resp, err := c.gh.Repositories.ListByAuthenticatedUser(ctx, &gh.RepositoryListByAuthenticatedUserOptions{
				Affiliation: "owner,collaborator,organization_member", ListOptions: opt})
			for _, r := range rs {
				out = append(out, repo(r))
			}
			return resp, err
		})
		if err != nil {
			return nil, apiError("listing the token user's repositories", err)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FullName < out[j].FullName })
	return out, nil
}

// hookTransport is the one place requests leave through, so wrappers
// (Instrument) can be added after construction.
type hookTransport struct{ next http.RoundTripper }

func (h *hookTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return h.next.RoundTrip(req)
}
