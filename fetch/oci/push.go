package oci

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/locator"
)

// PushOptions configures Push.
type PushOptions struct {
	// Revision is the kpt.dev/revision annotation (default: the tag when
	// it is v<N>, as Porch numbers revisions; else none).
	Revision string
	// Force moves a tag that already names other content. Published tags
	// should not move (consumers pin digests, but follow tags), so this
	// is refused by default.
	Force bool
}

var porchRevision = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v[0-9]+$`) })

// Image builds the package image for files in Porch's layout: an OCI
// manifest with one gzip tar layer of the files (sorted, fixed modes and
// times, so the same package always has the same digest) and the
// kpt.dev/lifecycle and kpt.dev/revision annotations on the manifest (where
// Porch reads them) and on the layer (where Porch writes them).
func Image(files map[string][]byte, revision string) (v1.Image, error) {
	if _, ok := files["Kptfile"]; !ok {
		return nil, fmt.Errorf("%w: no Kptfile at the package root", fetch.ErrNotPackage)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0).UTC()
	for _, n := range names {
		b := files[n]
		if err := tw.WriteHeader(&tar.Header{Name: n, Size: int64(len(b)), Mode: 0o644, ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return nil, fmt.Errorf("writing %s into the layer: %w", n, err)
		}
		if _, err := tw.Write(b); err != nil {
			return nil, fmt.Errorf("writing %s into the layer: %w", n, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("building the package layer: %w", err)
	}
	ann := map[string]string{AnnotationLifecycle: LifecyclePublished}
	if revision != "" {
		ann[AnnotationRevision] = revision
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:       layer,
		MediaType:   types.OCILayer,
		Annotations: ann,
		History:     v1.History{CreatedBy: "kptbot pkg push", Created: v1.Time{Time: epoch}},
	})
	if err != nil {
		return nil, fmt.Errorf("building the package image: %w", err)
	}
	annotated, ok := mutate.Annotations(img, ann).(v1.Image)
	if !ok {
		return nil, errors.New("annotating the package image: not an image")
	}
	return annotated, nil
}

// Push publishes files as the package at dir of repo under tag and returns
// the manifest digest. A tag that already names the same content is left
// as it is (pushing twice is safe); one that names other content is
// refused unless opts.Force.
func (c *Client) Push(ctx context.Context, repo, dir, tag string, files map[string][]byte, opts PushOptions) (string, error) {
	image := locator.ImageName(repo, dir)
	if tag == "" || locator.IsDigest(tag) {
		return "", fmt.Errorf("pushing oci://%s: a tag is required (oci://REGISTRY/REPO[//PKG]:TAG)", image)
	}
	r, err := c.repository(image)
	if err != nil {
		return "", err
	}
	if opts.Revision == "" && porchRevision().MatchString(tag) {
		opts.Revision = tag
	}
	img, err := Image(files, opts.Revision)
	if err != nil {
		return "", fmt.Errorf("pushing oci://%s:%s: %w", image, tag, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	digest := d.String()
	ref := r.Tag(tag)
	existing, err := remote.Head(ref, c.remoteOptions(ctx)...)
	var terr *transport.Error
	switch {
	case err == nil && existing.Digest.String() == digest:
		return digest, nil
	case err == nil && !opts.Force:
		return "", fmt.Errorf("oci://%s:%s already names %s, not this package (%s): published tags should not move; push a new tag, or pass --force", image, tag, existing.Digest, digest)
	case err != nil && !(errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound):
		return "", fmt.Errorf("pushing oci://%s:%s to registry %s: %w", image, tag, r.RegistryStr(), err)
	}
	if err := remote.Write(ref, img, c.remoteOptions(ctx)...); err != nil {
		return "", fmt.Errorf("pushing oci://%s:%s to registry %s: %w", image, tag, r.RegistryStr(), err)
	}
	return digest, nil
}

// TagInfo is one tag of a package and what its manifest says.
type TagInfo struct {
	Tag       string `json:"tag"`
	Digest    string `json:"digest"`
	Revision  string `json:"revision,omitempty"`
	Lifecycle string `json:"lifecycle,omitempty"`
}

// Package is a package of an OCI repository and its tags in version
// order (other tags last, by name).
type Package struct {
	Name string    `json:"name"`
	Tags []TagInfo `json:"tags"`
	// Latest is the tag Fetch resolves "latest" to ("" when none).
	Latest string `json:"latest,omitempty"`
}

// List lists the packages below repo (oci://REGISTRY/REPO, each an image
// repository REPO/PKG, found through the registry's catalog) and their
// tags. A registry without a catalog API is asked for repo itself only.
func (c *Client) List(ctx context.Context, repo string) ([]Package, error) {
	base, err := c.repository(locator.ImageName(repo, "/"))
	if err != nil {
		return nil, err
	}
	prefix := base.RepositoryStr()
	var names []string
	all, catErr := remote.Catalog(ctx, base.Registry, c.remoteOptions(ctx)...)
	for _, n := range all {
		if n == prefix {
			names = append(names, "")
		} else if p, ok := strings.CutPrefix(n, prefix+"/"); ok {
			names = append(names, p)
		}
	}
	if catErr != nil {
		names = []string{""}
	}
	sort.Strings(names)
	var out []Package
	for _, pkg := range names {
		r, err := c.repository(locator.ImageName(repo, "/"+pkg))
		if err != nil {
			return nil, err
		}
		tags, err := c.tags(ctx, r)
		if err != nil {
			if catErr != nil {
				return nil, fmt.Errorf("listing oci://%s: the registry's catalog failed (%v) and so did listing the repository's tags: %w", r.Name(), catErr, err)
			}
			return nil, fmt.Errorf("listing tags of oci://%s: %w", r.Name(), err)
		}
		if len(tags) == 0 {
			continue
		}
		p := Package{Name: pkg}
		if p.Name == "" {
			p.Name = "/"
		}
		ordered := append(locator.SortVersions(tags), nonVersions(tags)...)
		for _, t := range ordered {
			info, err := c.manifestInfo(ctx, r, t)
			if err != nil {
				return nil, err
			}
			p.Tags = append(p.Tags, info)
		}
		if v, ok := locator.LatestVersion(tags); ok {
			p.Latest = v
		}
		out = append(out, p)
	}
	return out, nil
}

func nonVersions(tags []string) []string {
	var out []string
	for _, t := range tags {
		if !locator.IsVersion(t) {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}
