// Package sources routes an upstream reference to the store that holds it:
// git (the default), an OCI registry (oci://) or an HTTP archive
// (https://....tar.gz|.tgz|.zip). Its Client is the engine's Fetcher for
// every command and for the reconciler, configured once from flags and
// the environment.
package sources

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/archive"
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/fetch/oci"
)

// Environment variables the sources read. Credentials are scoped: they are
// sent only to the hosts listed beside them, so a package that names some
// other registry or server never receives them.
const (
	EnvRegistryToken    = "KPTBOT_REGISTRY_TOKEN"    // registry bearer token
	EnvRegistryUsername = "KPTBOT_REGISTRY_USERNAME" // or username and password
	EnvRegistryPassword = "KPTBOT_REGISTRY_PASSWORD"
	EnvRegistryHosts    = "KPTBOT_REGISTRY_HOSTS" // comma-separated hosts the registry credentials are for
	EnvArchiveToken     = "KPTBOT_ARCHIVE_TOKEN"  // bearer token for archive downloads
	EnvArchiveHosts     = "KPTBOT_ARCHIVE_HOSTS"  // comma-separated hosts the archive token is for
	EnvInsecureHosts    = "KPTBOT_INSECURE_HOSTS" // comma-separated hosts allowed over plain HTTP
	EnvMaxBytes         = "KPTBOT_ARCHIVE_MAX_BYTES"
	EnvMaxFiles         = "KPTBOT_ARCHIVE_MAX_FILES"
)

// Options configures a Client. Zero values take the environment's
// settings, then the defaults.
type Options struct {
	// InsecureHosts may be reached over plain HTTP (loopback always may).
	InsecureHosts []string
	// Limits caps what an archive or OCI layer may unpack to.
	Limits archive.Limits
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// Keychain overrides registry credential resolution.
	Keychain authn.Keychain
	// HTTP is the client for archive downloads.
	HTTP *http.Client
}

// Client fetches from every kind of upstream; it is safe for concurrent use.
type Client struct {
	// Git, OCI and HTTP are the per-store clients.
	Git  *fetch.Client
	OCI  *oci.Client
	HTTP *archive.Client
}

// New builds a Client from opts and the environment. Credentials named in
// the environment without the hosts they are for are an error, never
// sent everywhere.
func New(opts Options) (*Client, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	insecure := append(append([]string(nil), opts.InsecureHosts...), splitList(getenv(EnvInsecureHosts))...)
	limits := opts.Limits
	if limits.MaxBytes == 0 {
		n, err := envInt(getenv, EnvMaxBytes)
		if err != nil {
			return nil, err
		}
		limits.MaxBytes = n
	}
	if limits.MaxFiles == 0 {
		n, err := envInt(getenv, EnvMaxFiles)
		if err != nil {
			return nil, err
		}
		limits.MaxFiles = int(n)
	}
	keychain := opts.Keychain
	if keychain == nil {
		env, err := envKeychain(getenv)
		if err != nil {
			return nil, err
		}
		keychain = authn.NewMultiKeychain(env, authn.DefaultKeychain)
	}
	archiveToken, archiveHosts := getenv(EnvArchiveToken), splitList(getenv(EnvArchiveHosts))
	if archiveToken != "" && len(archiveHosts) == 0 {
		return nil, fmt.Errorf("%s is set but %s is not: name the host(s) the token is for, so it is never sent to another server", EnvArchiveToken, EnvArchiveHosts)
	}
	return &Client{
		Git:  fetch.NewClient(),
		OCI:  oci.New(oci.Options{InsecureHosts: insecure, Keychain: keychain, Limits: limits}),
		HTTP: &archive.Client{HTTP: opts.HTTP, Limits: limits, InsecureHosts: insecure, Token: archiveToken, TokenHosts: archiveHosts},
	}, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func envInt(getenv func(string) string, key string) (int64, error) {
	v := getenv(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s=%q: expected a positive integer", key, v)
	}
	return n, nil
}

// scopedKeychain hands its credentials to the listed registries only.
type scopedKeychain struct {
	hosts []string
	auth  authn.Authenticator
}

func (k scopedKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if k.auth == nil || !locator.HostIn(r.RegistryStr(), k.hosts) {
		return authn.Anonymous, nil
	}
	return k.auth, nil
}

func envKeychain(getenv func(string) string) (authn.Keychain, error) {
	token, user, pass := getenv(EnvRegistryToken), getenv(EnvRegistryUsername), getenv(EnvRegistryPassword)
	hosts := splitList(getenv(EnvRegistryHosts))
	var auth authn.Authenticator
	switch {
	case token != "":
		auth = authn.FromConfig(authn.AuthConfig{RegistryToken: token})
	case user != "" || pass != "":
		if user == "" || pass == "" {
			return nil, fmt.Errorf("%s and %s must be set together", EnvRegistryUsername, EnvRegistryPassword)
		}
		auth = &authn.Basic{Username: user, Password: pass}
	default:
		return scopedKeychain{}, nil
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("registry credentials are set (%s or %s) but %s is not: name the registry host(s) they are for, so they are never sent to another registry", EnvRegistryToken, EnvRegistryUsername, EnvRegistryHosts)
	}
	return scopedKeychain{hosts: hosts, auth: auth}, nil
}

// Fetch fetches version of the package at dir of repo from whichever
// store repo names (see engine.Fetcher).
func (c *Client) Fetch(ctx context.Context, repo, dir, version string) (map[string][]byte, fetch.Resolved, error) {
	switch locator.Store(repo) {
	case locator.OCI:
		return c.OCI.Fetch(ctx, repo, dir, version)
	case locator.HTTP:
		return c.HTTP.Fetch(ctx, repo, dir, version)
	}
	return c.Git.Fetch(ctx, repo, dir, version)
}

// Latest resolves "latest" for an OCI package (its highest version tag)
// or an archive URL template (the highest of versions that exists). Git
// upstreams follow Porch's <package>/v<N> tags, which the reconciler reads.
func (c *Client) Latest(ctx context.Context, repo, dir string, versions []string) (string, error) {
	switch locator.Store(repo) {
	case locator.OCI:
		return c.OCI.Latest(ctx, repo, dir)
	case locator.HTTP:
		return c.HTTP.Latest(ctx, repo, versions)
	}
	return "", fmt.Errorf("upstream %s is a git repository: its latest revision is its highest <package>/v<N> tag", repo)
}
