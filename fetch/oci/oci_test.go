package oci

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/archive"
	"github.com/kptbot/kptbot/internal/ocitest"
)

func pkgFiles(name, extra string) map[string][]byte {
	files := map[string][]byte{
		"Kptfile":      []byte(ocitest.Kptfile(name)),
		"ns.yaml":      []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n"),
		"sub/cm.yaml":  []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"),
		"README.md":    []byte("# " + name + "\n"),
		"docs/how.txt": []byte(extra),
	}
	return files
}

func TestPushFetchRoundTrip(t *testing.T) {
	t.Parallel()
	host := ocitest.MemRegistry(t)
	repo := "oci://" + host + "/blueprints"
	c := New(Options{})
	ctx := context.Background()

	v1Files, v2Files := pkgFiles("basens", "one"), pkgFiles("basens", "two")
	d1, err := c.Push(ctx, repo, "/basens", "v1", v1Files, PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Same content, same digest: the image is reproducible and a second
	// push is a no-op.
	again, err := c.Push(ctx, repo, "/basens", "v1", v1Files, PushOptions{})
	if err != nil || again != d1 {
		t.Fatalf("second push = %s, %v; want %s", again, err, d1)
	}
	d2, err := c.Push(ctx, repo, "/basens", "v2", v2Files, PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, repo, "/basens", "v10", v2Files, PushOptions{Revision: "v10"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, repo, "/basens", "dev", v2Files, PushOptions{}); err != nil {
		t.Fatal(err)
	}

	got, res, err := c.Fetch(ctx, repo, "/basens", "v1")
	if err != nil {
		t.Fatal(err)
	}
	if res != (fetch.Resolved{Ref: "v1", Commit: d1}) {
		t.Fatalf("resolved %+v, want v1 at %s", res, d1)
	}
	if d := cmp.Diff(v1Files, got); d != "" {
		t.Fatalf("fetched files (-pushed +fetched):\n%s", d)
	}
	got, res, err = c.Fetch(ctx, repo, "/basens", d2)
	if err != nil || res.Commit != d2 || string(got["docs/how.txt"]) != "two" {
		t.Fatalf("fetch by digest = %+v, %v", res, err)
	}
	_, res, err = c.Fetch(ctx, repo, "/basens", "")
	if err != nil || res.Ref != "v10" {
		t.Fatalf("latest = %+v, %v; want v10 (v<N> ordering, non-version tags ignored)", res, err)
	}

	// Porch's layout: OCI manifest, one gzip tar layer, the annotations.
	r, _ := name.NewRepository(host + "/blueprints/basens")
	desc, err := remote.Get(r.Tag("v1"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := v1.ParseManifest(bytes.NewReader(desc.Manifest))
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
		t.Fatalf("manifest %s with layers %+v; want an OCI manifest with one %s layer", m.MediaType, m.Layers, types.OCILayer)
	}
	want := map[string]string{AnnotationLifecycle: "Published", AnnotationRevision: "v1"}
	if d := cmp.Diff(want, m.Annotations); d != "" {
		t.Fatalf("manifest annotations (-want +got):\n%s", d)
	}

	// A moving tag is refused unless forced.
	if _, err := c.Push(ctx, repo, "/basens", "v1", v2Files, PushOptions{}); err == nil || !strings.Contains(err.Error(), "should not move") {
		t.Fatalf("moving v1: %v, want a refusal", err)
	}
	if d, err := c.Push(ctx, repo, "/basens", "v1", v2Files, PushOptions{Force: true}); err != nil || d == d1 {
		t.Fatalf("forced move = %s, %v", d, err)
	}

	pkgs, err := c.List(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 || pkgs[0].Name != "basens" || pkgs[0].Latest != "v10" {
		t.Fatalf("List = %+v", pkgs)
	}
	var tags []string
	for _, ti := range pkgs[0].Tags {
		tags = append(tags, ti.Tag+"="+ti.Revision)
	}
	if got := strings.Join(tags, " "); got != "v1=v1 v2=v2 v10=v10 dev=" {
		t.Fatalf("List tags = %s", got)
	}
}

// pushRaw pushes an arbitrary image to host/repo:tag.
func pushRaw(t *testing.T, host, repo, tag string, img v1.Image) string {
	t.Helper()
	ref, err := name.NewTag(host + "/" + repo + ":" + tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return d.String()
}

func layerImage(t *testing.T, mt types.MediaType, tarBytes []byte) v1.Image {
	t.Helper()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tarBytes)), nil }, tarball.WithMediaType(mt))
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{Layer: l, MediaType: mt})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestFetchRefusesWhatIsNotAPackage(t *testing.T) {
	t.Parallel()
	host := ocitest.MemRegistry(t)
	repo := "oci://" + host + "/bad"
	pushRaw(t, host, "bad/nokptfile", "v1", layerImage(t, types.OCILayer, ocitest.Tar(t, ocitest.Entry{Name: "README.md", Body: "hi"})))
	pushRaw(t, host, "bad/helm", "v1", layerImage(t, "application/vnd.cncf.helm.chart.content.v1.tar+gzip", ocitest.Tar(t, ocitest.Entry{Name: "Kptfile", Body: "x"})))
	pushRaw(t, host, "bad/escape", "v1", layerImage(t, types.OCILayer, ocitest.Tar(t, ocitest.Entry{Name: "Kptfile", Body: "x"}, ocitest.Entry{Name: "../../etc/x", Body: "x"})))
	pushRaw(t, host, "bad/symlink", "v1", layerImage(t, types.OCILayer, ocitest.Tar(t, ocitest.Entry{Name: "Kptfile", Body: "x"}, ocitest.Entry{Name: "l", Type: tar.TypeSymlink, Link: "/etc/passwd"})))
	pushRaw(t, host, "bad/bomb", "v1", layerImage(t, types.OCILayer, ocitest.Tar(t, ocitest.Entry{Name: "Kptfile", Body: strings.Repeat("k", 4096)})))
	pushRaw(t, host, "bad/empty", "v1", mutate.MediaType(empty.Image, types.OCIManifestSchema1))
	idx := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: layerImage(t, types.OCILayer, ocitest.Tar(t, ocitest.Entry{Name: "Kptfile", Body: "x"}))})
	ref, _ := name.NewTag(host + "/bad/index:v1")
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatal(err)
	}
	c := New(Options{Limits: archive.Limits{MaxBytes: 1024}})
	tests := []struct {
		dir, version string
		is           error
		msg          string
	}{
		{dir: "/nokptfile", version: "v1", is: fetch.ErrNotPackage, msg: "holds no Kptfile at its root (it holds README.md)"},
		{dir: "/helm", version: "v1", is: fetch.ErrNotPackage, msg: "media type application/vnd.cncf.helm.chart"},
		{dir: "/escape", version: "v1", is: archive.ErrUnsafe, msg: "escape the package directory"},
		{dir: "/symlink", version: "v1", is: archive.ErrUnsafe, msg: "outside the package"},
		{dir: "/bomb", version: "v1", is: archive.ErrTooLarge, msg: "more than 1024 bytes"},
		{dir: "/empty", version: "v1", is: fetch.ErrNotPackage, msg: "no layers"},
		{dir: "/index", version: "v1", is: fetch.ErrNotPackage, msg: "image index"},
		{dir: "/escape", version: "v9", msg: `no tag "v9" (tags: v1)`},
		{dir: "/nothing", version: "v1", msg: "no package there"},
		{dir: "/nothing", version: "", msg: "listing tags of oci://" + host + "/bad/nothing"},
	}
	for _, tc := range tests {
		t.Run(tc.dir+"@"+tc.version, func(t *testing.T) {
			t.Parallel()
			_, _, err := c.Fetch(context.Background(), repo, tc.dir, tc.version)
			if err == nil || !strings.Contains(err.Error(), tc.msg) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("Fetch error = %v, want %v containing %q", err, tc.is, tc.msg)
			}
		})
	}
}

// tamperingRegistry answers every manifest request with the manifest of
// another package once tamper is set, as a compromised mirror would.
func tamperingRegistry(t *testing.T) (host string, tamper *atomic.Value) {
	t.Helper()
	reg := registry.New()
	tamper = &atomic.Value{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if swap, _ := tamper.Load().(string); swap != "" && strings.Contains(r.URL.Path, "/manifests/sha256:") {
			r = r.Clone(r.Context())
			i := strings.LastIndex(r.URL.Path, "/")
			r.URL.Path = r.URL.Path[:i+1] + swap
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), tamper
}

func TestFetchDetectsDigestMismatch(t *testing.T) {
	t.Parallel()
	host, tamper := tamperingRegistry(t)
	repo := "oci://" + host + "/bp"
	c := New(Options{})
	ctx := context.Background()
	d1, err := c.Push(ctx, repo, "/basens", "v1", pkgFiles("basens", "one"), PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d2, err := c.Push(ctx, repo, "/basens", "v2", pkgFiles("basens", "two"), PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tamper.Store(d2)
	_, _, err = c.Fetch(ctx, repo, "/basens", d1)
	if !errors.Is(err, fetch.ErrDigestMismatch) || !strings.Contains(err.Error(), d1) {
		t.Fatalf("Fetch of a tampered digest: %v, want ErrDigestMismatch naming %s", err, d1)
	}
}

func TestPlainHTTPOnlyForLoopbackOrAllowedHosts(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	// 10.0.0.1 is private: go-containerregistry alone would fall back to
	// plain HTTP for it; kptbot refuses without --insecure-registry.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := plainHTTPPolicy{base: http.DefaultTransport}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://10.0.0.1:5000/v2/", nil)
	if _, err := p.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "refusing plain HTTP to registry 10.0.0.1:5000") {
		t.Fatalf("plain HTTP to a private address: %v, want a refusal", err)
	}
	allowed := plainHTTPPolicy{base: http.DefaultTransport, insecure: []string{"10.0.0.1"}}
	if _, err := allowed.RoundTrip(req); err == nil || strings.Contains(err.Error(), "refusing") {
		t.Fatalf("allowed host: %v, want the request to go out (and fail on the cancelled context)", err)
	}
	if _, _, err := c.Fetch(context.Background(), "oci://127.0.0.1:1/bp", "/x", "v1"); err == nil || !strings.Contains(err.Error(), "registry 127.0.0.1:1") {
		t.Fatalf("unreachable registry: %v, want an error naming it", err)
	}
}
