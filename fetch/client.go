package fetch

import (
	"context"
	"sync"
)

// Client opens each repository once and serves package trees from it; it
// is safe for concurrent use.
type Client struct {
	mu    sync.Mutex
	repos map[string]*Repo
}

// NewClient returns a Client with an empty cache.
func NewClient() *Client {
	return &Client{repos: map[string]*Repo{}}
}

// Repo returns the opened repository for url, opening it on first use.
func (c *Client) Repo(ctx context.Context, url string) (*Repo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.repos[url]; ok {
		return r, nil
	}
	r, err := Open(ctx, url)
	if err != nil {
		return nil, err
	}
	c.repos[url] = r
	return r, nil
}

// Fetch resolves version for the package at dir of repo and returns its
// files with the resolution.
func (c *Client) Fetch(ctx context.Context, repo, dir, version string) (map[string][]byte, Resolved, error) {
	r, err := c.Repo(ctx, repo)
	if err != nil {
		return nil, Resolved{}, err
	}
	res, err := r.Resolve(ctx, dir, version)
	if err != nil {
		return nil, Resolved{}, err
	}
	files, err := r.Tree(ctx, res.Commit, dir)
	if err != nil {
		return nil, Resolved{}, err
	}
	return files, res, nil
}
