package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/locator"
)

// Client fetches package archives over HTTP(S). The zero value is usable:
// default limits, http.DefaultClient, plain HTTP for loopback only.
type Client struct {
	// HTTP is the client used (default http.DefaultClient).
	HTTP *http.Client
	// Limits caps the download and what it unpacks to.
	Limits Limits
	// InsecureHosts may be fetched over plain http (loopback always may).
	InsecureHosts []string
	// Token is sent as a bearer token, only to TokenHosts.
	Token      string
	TokenHosts []string
}

var safeVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`) })

// Fetch downloads the archive repo names (an archive URL or template, with
// any #sha256= pin), checks the pin, unpacks it safely and returns the
// package at dir. version fills a {version} template. The resolution's
// Commit is the archive's sha256 digest, its Ref the version.
func (c *Client) Fetch(ctx context.Context, repo, dir, version string) (map[string][]byte, fetch.Resolved, error) {
	target, pin, err := c.url(repo, version)
	if err != nil {
		return nil, fetch.Resolved{}, err
	}
	body, digest, err := c.download(ctx, target)
	if err != nil {
		return nil, fetch.Resolved{}, err
	}
	if pin != "" && digest != pin {
		return nil, fetch.Resolved{}, fmt.Errorf("archive %s: %w: it has %s, the reference pins %s: the file changed since it was pinned, or the pin is wrong",
			target, fetch.ErrDigestMismatch, digest, pin)
	}
	limits := c.Limits
	var files Files
	if strings.HasSuffix(pathOf(target), ".zip") {
		files, err = Zip(body, limits)
	} else {
		files, err = TarGz(bytes.NewReader(body), limits)
	}
	if err != nil {
		return nil, fetch.Resolved{}, fmt.Errorf("unpacking archive %s: %w", target, err)
	}
	files = StripSingleRoot(files)
	pkg, ok := Sub(files, dir)
	if !ok {
		return nil, fetch.Resolved{}, fmt.Errorf("archive %s: package directory %q not found (the archive holds %s)", target, dir, Listing(files, 8))
	}
	if _, ok := pkg["Kptfile"]; !ok {
		return nil, fetch.Resolved{}, fmt.Errorf("archive %s, directory %q: %w: no Kptfile at its root (it holds %s)", target, dir, fetch.ErrNotPackage, Listing(pkg, 8))
	}
	return pkg, fetch.Resolved{Ref: version, Commit: digest}, nil
}

// url builds the URL to fetch and returns the pinned digest, if any.
func (c *Client) url(repo, version string) (target, pin string, err error) {
	u, pin := locator.SplitPin(repo)
	switch {
	case locator.IsTemplate(u) && version == "":
		return "", "", fmt.Errorf("archive %s: the URL has a %s placeholder but no version was given", u, locator.VersionPlaceholder)
	case locator.IsTemplate(u):
		if !safeVersion().MatchString(version) {
			return "", "", fmt.Errorf("archive %s: version %q: expected letters, digits and . _ + - only", u, version)
		}
		u = locator.Expand(u, version)
	case version != "" && version != locator.Latest:
		return "", "", fmt.Errorf("archive %s: version %q given but the URL has no %s placeholder: an archive URL names one file", u, version, locator.VersionPlaceholder)
	}
	pu, err := url.Parse(u)
	if err != nil {
		return "", "", fmt.Errorf("archive URL %q: %w", u, err)
	}
	if pu.Scheme == "http" && !locator.PlainHTTPAllowed(pu.Host, c.InsecureHosts) {
		return "", "", fmt.Errorf("archive %s: refusing plain http to %s (only loopback, or a host allowed with --insecure-registry / KPTBOT_INSECURE_HOSTS): use https", u, pu.Host)
	}
	if pu.Scheme != "http" && pu.Scheme != "https" {
		return "", "", fmt.Errorf("archive URL %q: scheme %q: expected https", u, pu.Scheme)
	}
	return u, pin, nil
}

func pathOf(u string) string {
	if pu, err := url.Parse(u); err == nil {
		return pu.Path
	}
	return u
}

func (c *Client) client() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) request(ctx context.Context, method, target string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", target, err)
	}
	if c.Token != "" && locator.HostIn(req.URL.Host, c.TokenHosts) {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	req.Header.Set("User-Agent", "kptbot")
	return req, nil
}

// download GETs target into memory (at most the byte limit) and returns
// the body and its sha256 digest.
func (c *Client) download(ctx context.Context, target string) ([]byte, string, error) {
	req, err := c.request(ctx, http.MethodGet, target)
	if err != nil {
		return nil, "", err
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("fetching archive %s: %w", target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("fetching archive %s: HTTP %s: expected 200 and a .tar.gz, .tgz or .zip archive", target, resp.Status)
	}
	max := c.Limits.withDefaults().MaxBytes
	h := sha256.New()
	body, err := io.ReadAll(io.TeeReader(io.LimitReader(resp.Body, max+1), h))
	if err != nil {
		return nil, "", fmt.Errorf("fetching archive %s: %w", target, err)
	}
	if int64(len(body)) > max {
		return nil, "", fmt.Errorf("fetching archive %s: %w: the download is larger than %d bytes", target, ErrTooLarge, max)
	}
	return body, "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// Exists reports whether the archive for version answers 200 to HEAD (404
// and 410 are "no such version"; other failures are errors).
func (c *Client) Exists(ctx context.Context, repo, version string) (bool, error) {
	target, _, err := c.url(repo, version)
	if err != nil {
		return false, err
	}
	req, err := c.request(ctx, http.MethodHead, target)
	if err != nil {
		return false, err
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return false, fmt.Errorf("checking archive %s: %w", target, err)
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		return true, nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return false, nil
	}
	return false, fmt.Errorf("checking archive %s: HTTP %s", target, resp.Status)
}

// Latest is the highest of versions (by v<N>/semver ordering) whose
// archive exists: an HTTP upstream has no tag list, so the variant names
// the versions to try.
func (c *Client) Latest(ctx context.Context, repo string, versions []string) (string, error) {
	u, _ := locator.SplitPin(repo)
	if !locator.IsTemplate(u) {
		return "", fmt.Errorf("archive %s has no %s placeholder: it has one version, so there is no latest to look for", u, locator.VersionPlaceholder)
	}
	sorted := locator.SortVersions(versions)
	if len(sorted) == 0 {
		return "", fmt.Errorf("archive %s: no versions to try: list them (v<N> or semver) in upstream.versions", u)
	}
	for i := len(sorted) - 1; i >= 0; i-- {
		ok, err := c.Exists(ctx, repo, sorted[i])
		if err != nil {
			return "", err
		}
		if ok {
			return sorted[i], nil
		}
	}
	return "", fmt.Errorf("archive %s: none of the versions %s exists", u, strings.Join(sorted, ", "))
}

// Digest returns the sha256 digest form of b, as locks record it.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
