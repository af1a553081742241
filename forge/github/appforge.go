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

// Client returns the client of the installation holding r: found with the
// App's JWT the first time (or named by a webhook, see Remember), then
// cached.
func (a *AppForge) Client(ctx context.Context, r forge.Repo) (*Client, error) {
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

// For implements forge.Resolver: the Forge of the installation holding r,
// whose client is made once and cached, so a work item resolves once and
// every call it makes carries that installation's token.
func (a *AppForge) For(ctx context.Context, r forge.Repo) (forge.Forge, error) {
	c, err := a.Client(ctx, r)
	if err != nil {
		return forge.Forge{}, err
	}
	return forge.Compose(c), nil
}

var _ forge.Resolver = (*AppForge)(nil)
