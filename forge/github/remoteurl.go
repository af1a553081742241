package github

import (
	"context"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/forge"
)

// remoteURL is where the identity's credentials go for r's git content:
// the configured host's URL for owner/name (GitURL + owner/name.git), or
// what the API says the clone URL is. Repo.CloneURL decides nothing: it
// may come from a webhook payload, and a payload must not choose the
// server the token is sent to, nor which repository's content stands in
// for r's. It is only a hint: a CloneURL other than the configured
// host's asks the API (once per repository and client), as a server
// whose git host differs from its API host (tests, proxies) needs.
func (c *Client) remoteURL(ctx context.Context, r forge.Repo) (string, error) {
	owner, name, err := split(r)
	if err != nil {
		return "", err
	}
	onHost := c.GitURL + owner + "/" + name + ".git"
	if r.CloneURL == "" || strings.EqualFold(r.CloneURL, onHost) {
		return onHost, nil
	}
	key := strings.ToLower(owner + "/" + name)
	c.cloneMu.Lock()
	u, ok := c.cloneURLs[key]
	c.cloneMu.Unlock()
	if ok {
		return u, nil
	}
	repo, _, err := c.gh.Repositories.Get(ctx, owner, name)
	if err != nil {
		return "", apiError("reading the clone URL of "+r.FullName, err)
	}
	if u = repo.GetCloneURL(); u == "" {
		return "", fmt.Errorf("repository %s: GitHub gave no clone_url", r.FullName)
	}
	c.cloneMu.Lock()
	if c.cloneURLs == nil {
		c.cloneURLs = map[string]string{}
	}
	c.cloneURLs[key] = u
	c.cloneMu.Unlock()
	return u, nil
}
