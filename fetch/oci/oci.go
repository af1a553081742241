// Package oci reads and publishes kpt packages as OCI artifacts in Porch's
// OCI layout: one image repository per package (REGISTRY/REPO/PKG), one tag
// per revision, the package files in a gzip tar layer, and the manifest
// annotations kpt.dev/lifecycle and kpt.dev/revision. Everything goes
// through go-containerregistry; packages are always resolved to a manifest
// digest, which is what a Kptfile lock records.
package oci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/archive"
	"github.com/kptbot/kptbot/fetch/locator"
)

// Porch's manifest annotations (porch pkg/oci).
const (
	AnnotationLifecycle = "kpt.dev/lifecycle"
	AnnotationRevision  = "kpt.dev/revision"
	// LifecyclePublished is the lifecycle kptbot publishes with.
	LifecyclePublished = "Published"
)

// Options configures a Client.
type Options struct {
	// InsecureHosts may be reached over plain HTTP; loopback registries
	// always may, every other registry must use TLS.
	InsecureHosts []string
	// Keychain resolves credentials (default: the Docker config and its
	// credential helpers, authn.DefaultKeychain).
	Keychain authn.Keychain
	// Limits caps what a package's layers may unpack to.
	Limits archive.Limits
	// Transport is the base HTTP transport (default remote.DefaultTransport).
	Transport http.RoundTripper
}

// Client talks to OCI registries. It holds no state beyond its options and
// is safe for concurrent use.
type Client struct {
	opts Options
}

// New returns a Client.
func New(opts Options) *Client {
	if opts.Keychain == nil {
		opts.Keychain = authn.DefaultKeychain
	}
	if opts.Transport == nil {
		opts.Transport = remote.DefaultTransport
	}
	return &Client{opts: opts}
}

// plainHTTPPolicy refuses unencrypted requests to registries that are
// neither loopback nor explicitly allowed: go-containerregistry itself
// falls back to http for private (RFC 1918) addresses, which is too lax.
type plainHTTPPolicy struct {
	base     http.RoundTripper
	insecure []string
}

func (p plainHTTPPolicy) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" && !locator.PlainHTTPAllowed(req.URL.Host, p.insecure) {
		return nil, fmt.Errorf("refusing plain HTTP to registry %s: only loopback registries, or ones allowed with --insecure-registry, may be reached without TLS", req.URL.Host)
	}
	return p.base.RoundTrip(req)
}

func (c *Client) remoteOptions(ctx context.Context) []remote.Option {
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(c.opts.Keychain),
		remote.WithTransport(plainHTTPPolicy{base: c.opts.Transport, insecure: c.opts.InsecureHosts}),
		remote.WithUserAgent("kptbot"),
	}
}

// repository parses an image repository name (REGISTRY/REPO/PKG).
func (c *Client) repository(image string) (name.Repository, error) {
	var opts []name.Option
	host, _, _ := strings.Cut(image, "/")
	if locator.HostIn(host, c.opts.InsecureHosts) {
		opts = append(opts, name.Insecure)
	}
	r, err := name.NewRepository(image, opts...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("OCI repository %q: %w", image, err)
	}
	return r, nil
}

// Fetch resolves version (a tag, a sha256 digest, or ""/"latest" for the
// highest version tag) of the package at dir of the OCI repository repo
// (oci://REGISTRY/REPO) and returns its files. The resolution's Commit is
// the manifest digest, its Ref the tag (or the digest).
func (c *Client) Fetch(ctx context.Context, repo, dir, version string) (map[string][]byte, fetch.Resolved, error) {
	image := locator.ImageName(repo, dir)
	r, err := c.repository(image)
	if err != nil {
		return nil, fetch.Resolved{}, err
	}
	if version == "" || version == locator.Latest {
		if version, err = c.Latest(ctx, repo, dir); err != nil {
			return nil, fetch.Resolved{}, err
		}
	}
	var ref name.Reference = r.Tag(version)
	if locator.IsDigest(version) {
		ref = r.Digest(version)
	}
	desc, err := remote.Get(ref, c.remoteOptions(ctx)...)
	if err != nil {
		return nil, fetch.Resolved{}, c.explain(ctx, r, version, err)
	}
	digest := desc.Digest.String()
	if locator.IsDigest(version) && digest != version {
		return nil, fetch.Resolved{}, fmt.Errorf("oci://%s: %w: the registry served %s for %s", image, fetch.ErrDigestMismatch, digest, version)
	}
	files, err := c.unpack(desc, image)
	if err != nil {
		return nil, fetch.Resolved{}, err
	}
	return files, fetch.Resolved{Ref: version, Commit: digest}, nil
}

// unpack checks that desc is a package image and unpacks its layers.
func (c *Client) unpack(desc *remote.Descriptor, image string) (map[string][]byte, error) {
	at := fmt.Sprintf("oci://%s@%s", image, desc.Digest)
	if desc.MediaType.IsIndex() {
		return nil, fmt.Errorf("%s: %w: it is an image index (%s), not a package image", at, fetch.ErrNotPackage, desc.MediaType)
	}
	if !desc.MediaType.IsImage() {
		return nil, fmt.Errorf("%s: %w: manifest media type %s is not an image manifest", at, fetch.ErrNotPackage, desc.MediaType)
	}
	img, err := desc.Image()
	if err != nil {
		return nil, fmt.Errorf("%s: reading the image: %w", at, err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("%s: reading the layers: %w", at, err)
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("%s: %w: the image has no layers (expected one gzip tar layer of the package files)", at, fetch.ErrNotPackage)
	}
	openers := make([]func() (io.ReadCloser, error), len(layers))
	for i, l := range layers {
		mt, err := l.MediaType()
		if err != nil {
			return nil, fmt.Errorf("%s: layer %d: %w", at, i, err)
		}
		switch mt {
		case types.OCILayer, types.DockerLayer, types.OCIUncompressedLayer, types.DockerUncompressedLayer:
		default:
			return nil, fmt.Errorf("%s: %w: layer %d has media type %s (expected a gzip tar of the package files, %s)", at, fetch.ErrNotPackage, i, mt, types.OCILayer)
		}
		openers[i] = l.Uncompressed
	}
	files, err := archive.Layers(c.opts.Limits, openers...)
	if err != nil {
		if isVerifyError(err) {
			return nil, fmt.Errorf("%s: %w: a layer's content does not match its digest: %v", at, fetch.ErrDigestMismatch, err)
		}
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	if _, ok := files["Kptfile"]; !ok {
		return nil, fmt.Errorf("%s: %w: the layer holds no Kptfile at its root (it holds %s)", at, fetch.ErrNotPackage, archive.Listing(files, 8))
	}
	return files, nil
}

// explain turns a registry error into one that says what was expected:
// a missing tag lists the tags there are.
func (c *Client) explain(ctx context.Context, r name.Repository, version string, err error) error {
	if isVerifyError(err) {
		return fmt.Errorf("oci://%s@%s: %w: %v", r.Name(), version, fetch.ErrDigestMismatch, err)
	}
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		tags, lerr := c.tags(ctx, r)
		switch {
		case lerr != nil || len(tags) == 0:
			return fmt.Errorf("oci://%s: no package there (expected a package image tagged %s): %w", r.Name(), version, err)
		case locator.IsDigest(version):
			return fmt.Errorf("oci://%s: no manifest %s (tags: %s)", r.Name(), version, strings.Join(tags, ", "))
		default:
			return fmt.Errorf("oci://%s: no tag %q (tags: %s)", r.Name(), version, strings.Join(tags, ", "))
		}
	}
	return fmt.Errorf("fetching oci://%s:%s from registry %s: %w", r.Name(), version, r.RegistryStr(), err)
}

// isVerifyError recognizes go-containerregistry's content verification
// failures (a manifest or blob whose bytes do not hash to the digest that
// named them); the library reports them as plain errors, and its verify
// package is internal, so the messages are all there is to go by.
func isVerifyError(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "does not match requested digest") ||
		strings.Contains(msg, "error verifying") ||
		strings.Contains(msg, "does not match expected size")
}

func (c *Client) tags(ctx context.Context, r name.Repository) ([]string, error) {
	tags, err := remote.List(r, c.remoteOptions(ctx)...)
	if err != nil {
		return nil, err
	}
	sort.Strings(tags)
	return tags, nil
}

// Tags lists the tags of the package at dir of repo.
func (c *Client) Tags(ctx context.Context, repo, dir string) ([]string, error) {
	r, err := c.repository(locator.ImageName(repo, dir))
	if err != nil {
		return nil, err
	}
	tags, err := c.tags(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("listing tags of oci://%s on registry %s: %w", r.Name(), r.RegistryStr(), err)
	}
	return tags, nil
}

// Latest is the package's highest version tag (v<N>, then semver; see
// locator.LatestVersion), or a tag literally named "latest" when there
// are no version tags.
func (c *Client) Latest(ctx context.Context, repo, dir string) (string, error) {
	tags, err := c.Tags(ctx, repo, dir)
	if err != nil {
		return "", err
	}
	if v, ok := locator.LatestVersion(tags); ok {
		return v, nil
	}
	for _, t := range tags {
		if t == locator.Latest {
			return t, nil
		}
	}
	if len(tags) == 0 {
		return "", fmt.Errorf("oci://%s has no tags: nothing is published there", locator.ImageName(repo, dir))
	}
	return "", fmt.Errorf("oci://%s has no version tags (v<N> or semver) to pick the latest from (tags: %s): name a tag", locator.ImageName(repo, dir), strings.Join(tags, ", "))
}

// Resolve returns the manifest digest a tag (or digest) names, without
// downloading the package.
func (c *Client) Resolve(ctx context.Context, repo, dir, version string) (string, error) {
	r, err := c.repository(locator.ImageName(repo, dir))
	if err != nil {
		return "", err
	}
	var ref name.Reference = r.Tag(version)
	if locator.IsDigest(version) {
		ref = r.Digest(version)
	}
	d, err := remote.Head(ref, c.remoteOptions(ctx)...)
	if err != nil {
		return "", c.explain(ctx, r, version, err)
	}
	return d.Digest.String(), nil
}

// manifestInfo reads a tag's digest and Porch annotations.
func (c *Client) manifestInfo(ctx context.Context, r name.Repository, tag string) (TagInfo, error) {
	desc, err := remote.Get(r.Tag(tag), c.remoteOptions(ctx)...)
	if err != nil {
		return TagInfo{}, fmt.Errorf("reading oci://%s:%s: %w", r.Name(), tag, err)
	}
	info := TagInfo{Tag: tag, Digest: desc.Digest.String()}
	if desc.MediaType.IsImage() {
		var m v1.Manifest
		if mf, err := v1.ParseManifest(bytes.NewReader(desc.Manifest)); err == nil {
			m = *mf
		}
		info.Revision = m.Annotations[AnnotationRevision]
		info.Lifecycle = m.Annotations[AnnotationLifecycle]
	}
	return info, nil
}
