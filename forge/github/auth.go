package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gh "github.com/google/go-github/v60/github"

	"github.com/kptbot/kptbot/forge/ratelimit"
)

// NewTokenClient and NewAppClient give each identity its own scheduler
// (ratelimit.GitHubSecondary), through which all its writes go, and its
// own ETag cache (etagBytes of answers) for conditional reads.
const etagBytes = 32 << 20

// NewTokenClient returns an adapter authenticated with a plain token: the
// Action's GITHUB_TOKEN or a personal access token. The token is sent only
// in headers and git credentials, never in URLs, so it cannot reach a log.
func NewTokenClient(token, baseURL string) (*Client, error) {
	if strings.TrimSpace(token) == "" {
		return nil, errors.New("GitHub token is empty")
	}
	return newIdentityClient(&tokenTransport{token: token, next: http.DefaultTransport}, baseURL, func(context.Context) (string, error) {
		return token, nil
	})
}

// newIdentityClient builds the adapter for one identity whose requests
// authenticate through auth: its own write scheduler and ETag cache, and
// pushes with the token that token returns.
func newIdentityClient(auth http.RoundTripper, baseURL string, token func(context.Context) (string, error)) (*Client, error) {
	sched := ratelimit.New(ratelimit.GitHubSecondary, nil)
	c, err := NewClient(&http.Client{Transport: NewETagTransport(NewScheduledTransport(auth, sched), etagBytes)}, baseURL)
	if err != nil {
		return nil, err
	}
	c.Scheduler = sched
	c.GitAuth = func(ctx context.Context) (transport.AuthMethod, error) {
		tok, err := token(ctx)
		if err != nil {
			return nil, err
		}
		return &githttp.BasicAuth{Username: "x-access-token", Password: tok}, nil
	}
	return c, nil
}

type tokenTransport struct {
	token string
	next  http.RoundTripper
}

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

// NewAppClient returns an adapter acting as one installation of a GitHub
// App: requests carry an installation token that ghinstallation mints from
// the App's private key (a JWT) and caches until shortly before it
// expires; pushes use the same token. baseURL is empty for github.com or a
// GitHub Enterprise Server API root (https://ghe.example.com/api/v3).
func NewAppClient(appID, installationID int64, privateKeyPEM []byte, baseURL string) (*Client, error) {
	itr, err := ghinstallation.New(http.DefaultTransport, appID, installationID, privateKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("GitHub App %d: reading the private key: %w", appID, err)
	}
	// An empty options object, not JSON null: GitHub's description of the
	// access-token call requires an object body.
	itr.InstallationTokenOptions = &gh.InstallationTokenOptions{}
	if baseURL != "" {
		itr.BaseURL = strings.TrimSuffix(baseURL, "/")
	}
	return newIdentityClient(itr, baseURL, func(ctx context.Context) (string, error) {
		tok, err := itr.Token(ctx)
		if err != nil {
			return "", fmt.Errorf("GitHub App %d installation %d: minting a token: %w", appID, installationID, err)
		}
		return tok, nil
	})
}
