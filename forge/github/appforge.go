package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v60/github"

	"github.com/kptbot/kptbot/forge"
)

// AppForge is a GitHub App across all its installations: each repository's
// calls go through the client of the installation that holds it (found
// once with the App's JWT and cached), so one server serves every
// organization the App is installed in, each under its own token and rate
// limits.
type AppForge struct {
	appID   int64
	key     []byte
	baseURL string
	// apps is the App-level (JWT) API, for finding installations.
	apps *gh.Client
	// setup configures each new installation client (metrics, ETags).
	setup func(*Client, int64)

	mu      sync.Mutex
	byRepo  map[string]int64
	clients map[int64]*Client
}

// NewAppForge returns the App's forge; setup (optional) is called on each
// installation client as it is created.
func NewAppForge(appID int64, privateKeyPEM []byte, baseURL string, setup func(c *Client, installationID int64)) (*AppForge, error) {
	atr, err := ghinstallation.NewAppsTransport(http.DefaultTransport, appID, privateKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("GitHub App %d: reading the private key: %w", appID, err)
	}
	apps := gh.NewClient(&http.Client{Transport: atr})
	if baseURL != "" {
		u, err := url.Parse(strings.TrimSuffix(baseURL, "/") + "/")
		if err != nil {
			return nil, fmt.Errorf("GitHub API base URL %q: %w", baseURL, err)
		}
		atr.BaseURL = strings.TrimSuffix(baseURL, "/")
		apps.BaseURL = u
	}
	return &AppForge{appID: appID, key: privateKeyPEM, baseURL: baseURL, apps: apps, setup: setup,
		byRepo: map[string]int64{}, clients: map[int64]*Client{}}, nil
}

// Login is the account the App acts as: its slug + "[bot]".
func (a *AppForge) Login(ctx context.Context) (string, error) {
	app, _, err := a.apps.Apps.Get(ctx, "")
	if err != nil {
		return "", apiError("reading the App", err)
	}
	if app.GetSlug() == "" {
		return "", fmt.Errorf("GitHub App %d: GitHub gave no slug", a.appID)
	}
	return app.GetSlug() + "[bot]", nil
}

// Installation returns (creating once) the client of an installation.
func (a *AppForge) Installation(id int64) (*Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.clients[id]; ok {
		return c, nil
	}
	c, err := NewAppClient(a.appID, id, a.key, a.baseURL)
	if err != nil {
		return nil, err
	}
	if a.setup != nil {
		a.setup(c, id)
	}
	a.clients[id] = c
	return c, nil
}

// Remember records a repository's installation (webhooks name it), saving
// the lookup.
func (a *AppForge) Remember(repo string, installationID int64) {
	if installationID == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.byRepo[repo] = installationID
}

// For returns the client for a repository's installation.
func (a *AppForge) For(ctx context.Context, r forge.Repo) (*Client, error) {
	a.mu.Lock()
	id, ok := a.byRepo[r.FullName]
	a.mu.Unlock()
	if !ok {
		owner, name, err := split(r)
		if err != nil {
			return nil, err
		}
		inst, _, err := a.apps.Apps.FindRepositoryInstallation(ctx, owner, name)
		if err != nil {
			return nil, apiError(fmt.Sprintf("finding the App installation of %s", r.FullName), err)
		}
		id = inst.GetID()
		a.Remember(r.FullName, id)
	}
	return a.Installation(id)
}

// ListRepos implements forge.RepoLister: every repository of every
// installation.
func (a *AppForge) ListRepos(ctx context.Context) ([]forge.Repo, error) {
	var ids []int64
	err := paginate(func(opt gh.ListOptions) (*gh.Response, error) {
		is, resp, err := a.apps.Apps.ListInstallations(ctx, &opt)
		for _, i := range is {
			ids = append(ids, i.GetID())
		}
		return resp, err
	})
	if err != nil {
		return nil, apiError("listing the App's installations", err)
	}
	var out []forge.Repo
	for _, id := range ids {
		c, err := a.Installation(id)
		if err != nil {
			return nil, err
		}
		rs, err := c.ListRepos(ctx)
		if err != nil {
			return nil, fmt.Errorf("installation %d: %w", id, err)
		}
		for _, r := range rs {
			a.Remember(r.FullName, id)
		}
		out = append(out, rs...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FullName < out[j].FullName })
	return out, nil
}

var _ forge.Forge = (*AppForge)(nil)

// ReadFile implements forge.Forge through the repository's installation.
func (a *AppForge) ReadFile(ctx context.Context, r forge.Repo, ref, path string) ([]byte, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return nil, err
	}
	return c.ReadFile(ctx, r, ref, path)
}

// ListTree implements forge.Forge through the repository's installation.
func (a *AppForge) ListTree(ctx context.Context, r forge.Repo, ref, dir string) ([]string, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return nil, err
	}
	return c.ListTree(ctx, r, ref, dir)
}

// ReadTree implements forge.Forge through the repository's installation.
func (a *AppForge) ReadTree(ctx context.Context, r forge.Repo, ref, dir string) (forge.Snapshot, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return forge.Snapshot{}, err
	}
	return c.ReadTree(ctx, r, ref, dir)
}

// ListTags implements forge.Forge through the repository's installation.
func (a *AppForge) ListTags(ctx context.Context, r forge.Repo) ([]forge.Tag, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return nil, err
	}
	return c.ListTags(ctx, r)
}

// ListBranches implements forge.Forge through the repository's installation.
func (a *AppForge) ListBranches(ctx context.Context, r forge.Repo) ([]forge.Branch, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return nil, err
	}
	return c.ListBranches(ctx, r)
}

// PushFiles implements forge.Forge through the repository's installation.
func (a *AppForge) PushFiles(ctx context.Context, r forge.Repo, branch, oldSHA, base string, files map[string][]byte, message string) (sha string, err error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return "", err
	}
	return c.PushFiles(ctx, r, branch, oldSHA, base, files, message)
}

// DeleteBranch implements forge.Forge through the repository's installation.
func (a *AppForge) DeleteBranch(ctx context.Context, r forge.Repo, branch, expectedSHA string) error {
	c, err := a.For(ctx, r)
	if err != nil {
		return err
	}
	return c.DeleteBranch(ctx, r, branch, expectedSHA)
}

// ListChangesByHead implements forge.Forge through the repository's installation.
func (a *AppForge) ListChangesByHead(ctx context.Context, r forge.Repo, head string) ([]forge.Change, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return nil, err
	}
	return c.ListChangesByHead(ctx, r, head)
}

// ListOpenChanges implements forge.Forge through the repository's installation.
func (a *AppForge) ListOpenChanges(ctx context.Context, r forge.Repo) ([]forge.Change, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return nil, err
	}
	return c.ListOpenChanges(ctx, r)
}

// GetChange implements forge.Forge through the repository's installation.
func (a *AppForge) GetChange(ctx context.Context, r forge.Repo, number int) (forge.Change, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return forge.Change{}, err
	}
	return c.GetChange(ctx, r, number)
}

// OpenChange implements forge.Forge through the repository's installation.
func (a *AppForge) OpenChange(ctx context.Context, r forge.Repo, spec forge.ChangeSpec) (forge.Change, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return forge.Change{}, err
	}
	return c.OpenChange(ctx, r, spec)
}

// UpdateChange implements forge.Forge through the repository's installation.
func (a *AppForge) UpdateChange(ctx context.Context, r forge.Repo, number int, u forge.ChangeUpdate) (forge.Change, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return forge.Change{}, err
	}
	return c.UpdateChange(ctx, r, number, u)
}

// CloseChange implements forge.Forge through the repository's installation.
func (a *AppForge) CloseChange(ctx context.Context, r forge.Repo, number int) error {
	c, err := a.For(ctx, r)
	if err != nil {
		return err
	}
	return c.CloseChange(ctx, r, number)
}

// Merge implements forge.Forge through the repository's installation.
func (a *AppForge) Merge(ctx context.Context, r forge.Repo, number int, expectedHeadSHA, method string) (mergeSHA string, err error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return "", err
	}
	return c.Merge(ctx, r, number, expectedHeadSHA, method)
}

// ListReviews implements forge.Forge through the repository's installation.
func (a *AppForge) ListReviews(ctx context.Context, r forge.Repo, number int) ([]forge.Review, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return nil, err
	}
	return c.ListReviews(ctx, r, number)
}

// CreateTag implements forge.Forge through the repository's installation.
func (a *AppForge) CreateTag(ctx context.Context, r forge.Repo, name, sha, message string) error {
	c, err := a.For(ctx, r)
	if err != nil {
		return err
	}
	return c.CreateTag(ctx, r, name, sha, message)
}

// Comment implements forge.Forge through the repository's installation.
func (a *AppForge) Comment(ctx context.Context, r forge.Repo, number int, body string) (forge.Comment, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return forge.Comment{}, err
	}
	return c.Comment(ctx, r, number, body)
}

// ListComments implements forge.Forge through the repository's installation.
func (a *AppForge) ListComments(ctx context.Context, r forge.Repo, number int) ([]forge.Comment, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return nil, err
	}
	return c.ListComments(ctx, r, number)
}

// EditComment implements forge.Forge through the repository's installation.
func (a *AppForge) EditComment(ctx context.Context, r forge.Repo, number int, id int64, body string) error {
	c, err := a.For(ctx, r)
	if err != nil {
		return err
	}
	return c.EditComment(ctx, r, number, id, body)
}

// React implements forge.Forge through the repository's installation.
func (a *AppForge) React(ctx context.Context, r forge.Repo, number int, commentID int64, reaction string) error {
	c, err := a.For(ctx, r)
	if err != nil {
		return err
	}
	return c.React(ctx, r, number, commentID, reaction)
}

// ListIssues implements forge.Forge through the repository's installation.
func (a *AppForge) ListIssues(ctx context.Context, r forge.Repo, label string) ([]forge.Issue, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return nil, err
	}
	return c.ListIssues(ctx, r, label)
}

// OpenIssue implements forge.Forge through the repository's installation.
func (a *AppForge) OpenIssue(ctx context.Context, r forge.Repo, title, body string, labels []string) (forge.Issue, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return forge.Issue{}, err
	}
	return c.OpenIssue(ctx, r, title, body, labels)
}

// EditIssue implements forge.Forge through the repository's installation.
func (a *AppForge) EditIssue(ctx context.Context, r forge.Repo, number int, title, body string) error {
	c, err := a.For(ctx, r)
	if err != nil {
		return err
	}
	return c.EditIssue(ctx, r, number, title, body)
}

// TeamMember implements forge.Forge through the repository's installation.
func (a *AppForge) TeamMember(ctx context.Context, r forge.Repo, team, login string) (bool, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return false, err
	}
	return c.TeamMember(ctx, r, team, login)
}

// Permission implements forge.Forge through the repository's installation.
func (a *AppForge) Permission(ctx context.Context, r forge.Repo, login string) (forge.Permission, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return "", err
	}
	return c.Permission(ctx, r, login)
}

// ReportCheck implements forge.Forge through the repository's installation.
func (a *AppForge) ReportCheck(ctx context.Context, r forge.Repo, rep forge.CheckReport) error {
	c, err := a.For(ctx, r)
	if err != nil {
		return err
	}
	return c.ReportCheck(ctx, r, rep)
}

// Dispatch implements forge.Forge through the repository's installation.
func (a *AppForge) Dispatch(ctx context.Context, r forge.Repo, eventType string, payload map[string]any) error {
	c, err := a.For(ctx, r)
	if err != nil {
		return err
	}
	return c.Dispatch(ctx, r, eventType, payload)
}

// Log implements forge.Forge through the repository's installation.
func (a *AppForge) Log(ctx context.Context, r forge.Repo, from, to string) ([]forge.Commit, error) {
	c, err := a.For(ctx, r)
	if err != nil {
		return nil, err
	}
	return c.Log(ctx, r, from, to)
}
