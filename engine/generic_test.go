package engine

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/archive"
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/fetch/oci"
	"github.com/kptbot/kptbot/fetch/sources"
	"github.com/kptbot/kptbot/internal/ocitest"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
)

// basens returns version n of a small package: a Namespace and a
// ConfigMap whose data changes with n.
func basens(n string) map[string][]byte {
	return map[string][]byte{
		"Kptfile":        []byte(ocitest.Kptfile("basens")),
		"namespace.yaml": []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n"),
		"config.yaml":    []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  version: \"" + n + "\"\n"),
	}
}

func newSources(t *testing.T) *sources.Client {
	t.Helper()
	c, err := sources.New(sources.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// editNamespace adds a local label to the fetched Namespace.
func editNamespace(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "namespace.yaml")
	s := strings.Replace(readFile(t, p), "  name: example\n", "  name: example\n  labels:\n    team: a\n", 1)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOCIGetUpdateKeepsEditsAndLocksDigests(t *testing.T) {
	t.Parallel()
	host := ocitest.MemRegistry(t)
	repo := "oci://" + host + "/blueprints"
	src := newSources(t)
	ctx := context.Background()
	d1, err := src.OCI.Push(ctx, repo, "/basens", "v1", basens("1"), oci.PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "team-a")
	res, err := Get(ctx, src, dest, GetOptions{Repo: repo, Dir: "/basens"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Packages[0]; got.Resolved.Commit != d1 || got.Resolved.Ref != "v1" || got.Source() != repo+"//basens" {
		t.Fatalf("fetched %+v (%s), want v1 at %s", got, got.Source(), d1)
	}
	kf, err := kptpkg.ReadKptfile(dest)
	if err != nil {
		t.Fatal(err)
	}
	up, _ := kptpkg.UpstreamOf(kf)
	lock, _ := kptpkg.LockOf(kf)
	if kf.Upstream.Type != kptpkg.GenericOrigin || kf.UpstreamLock.Type != kptpkg.GenericOrigin || kf.Upstream.Git != nil {
		t.Fatalf("upstream %+v, lock %+v: want generic", kf.Upstream, kf.UpstreamLock)
	}
	if *up != (kptpkg.Origin{Store: locator.OCI, Repo: repo, Dir: "/basens", Ref: "latest"}) || lock.Commit != d1 || lock.Ref != "v1" {
		t.Fatalf("upstream %+v lock %+v", up, lock)
	}
	if kf.Annotations[kptpkg.AnnotationLockResourceID] != repo+"//basens:v1" || kf.Annotations[kptpkg.AnnotationLockResourceVersion] != d1 {
		t.Fatalf("lock annotations %v", kf.Annotations)
	}
	if !strings.Contains(readFile(t, filepath.Join(dest, "namespace.yaml")), "# kpt-merge: /example") {
		t.Fatalf("namespace.yaml has no kpt-merge comment")
	}

	editNamespace(t, dest)
	d2, err := src.OCI.Push(ctx, repo, "/basens", "v2", basens("2"), oci.PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The Kptfile follows "latest", so a plain update takes v2.
	ures, err := Update(ctx, src, dest, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ures.Packages[0].Resolved.Commit != d2 || len(ures.Conflicts) != 0 {
		t.Fatalf("update %+v, want v2 at %s without conflicts", ures, d2)
	}
	ns, cfg := readFile(t, filepath.Join(dest, "namespace.yaml")), readFile(t, filepath.Join(dest, "config.yaml"))
	if !strings.Contains(ns, "team: a") || !strings.Contains(cfg, `version: "2"`) {
		t.Fatalf("after update: namespace.yaml\n%s\nconfig.yaml\n%s\nwant the local label and upstream's v2", ns, cfg)
	}
	kf, _ = kptpkg.ReadKptfile(dest)
	if lock, _ := kptpkg.LockOf(kf); lock.Commit != d2 || lock.Ref != "v2" {
		t.Fatalf("lock after update = %+v, want v2 at %s", lock, d2)
	}

	// Pin back to v1 by digest: origin is the locked v2 digest, updated v1.
	if _, err := Update(ctx, src, dest, UpdateOptions{Version: d1}); err != nil {
		t.Fatal(err)
	}
	if cfg := readFile(t, filepath.Join(dest, "config.yaml")); !strings.Contains(cfg, `version: "1"`) {
		t.Fatalf("config.yaml after pinning v1:\n%s", cfg)
	}
	kf, _ = kptpkg.ReadKptfile(dest)
	if up, _ := kptpkg.UpstreamOf(kf); up.Ref != d1 {
		t.Fatalf("upstream ref %q, want the digest", up.Ref)
	}
}

func TestHTTPArchiveGetUpdate(t *testing.T) {
	t.Parallel()
	tgz := func(n string) []byte {
		var es []ocitest.Entry
		for name, b := range basens(n) {
			es = append(es, ocitest.Entry{Name: "blueprints-" + n + "/catalog/basens/" + name, Body: string(b)})
		}
		return ocitest.TarGz(t, es...)
	}
	v1, v2 := tgz("1"), tgz("2")
	srv := ocitest.NewArchiveServer(t, map[string][]byte{"/releases/v1/bp.tar.gz": v1, "/releases/v2/bp.tar.gz": v2})
	src := newSources(t)
	ctx := context.Background()
	ref, _, err := locator.Parse(srv.URL + "/releases/{version}/bp.tar.gz//catalog/basens@v1")
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "ns")
	if _, err := Get(ctx, src, dest, GetOptions{Repo: ref.Repo, Dir: ref.Dir, Version: ref.Version}); err != nil {
		t.Fatal(err)
	}
	kf, _ := kptpkg.ReadKptfile(dest)
	lock, _ := kptpkg.LockOf(kf)
	if lock.Commit != archive.Digest(v1) || lock.Repo != srv.URL+"/releases/v1/bp.tar.gz" || lock.Dir != "/catalog/basens" {
		t.Fatalf("lock %+v, want the v1 archive's digest and URL", lock)
	}
	if kf.Annotations[kptpkg.AnnotationUpstreamResourceID] != srv.URL+"/releases/{version}/bp.tar.gz//catalog/basens" || kf.Annotations[kptpkg.AnnotationUpstreamResourceVersion] != "v1" {
		t.Fatalf("upstream annotations %v", kf.Annotations)
	}
	editNamespace(t, dest)
	if _, err := Update(ctx, src, dest, UpdateOptions{Version: "v2"}); err != nil {
		t.Fatal(err)
	}
	if ns, cfg := readFile(t, filepath.Join(dest, "namespace.yaml")), readFile(t, filepath.Join(dest, "config.yaml")); !strings.Contains(ns, "team: a") || !strings.Contains(cfg, `version: "2"`) {
		t.Fatalf("after update: %s\n%s", ns, cfg)
	}
	out, err := Diff(ctx, src, dest, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "+    team: a") || strings.Contains(out, "Kptfile") {
		t.Fatalf("local diff:\n%s\nwant only the local label", out)
	}

	// The origin archive changed on the server: the update stops before
	// touching the package, naming the digest it expected.
	srv.Set("/releases/v2/bp.tar.gz", v1)
	before, _ := kptpkg.ReadTree(dest)
	_, err = Update(ctx, src, dest, UpdateOptions{})
	if !errors.Is(err, fetch.ErrDigestMismatch) || !strings.Contains(err.Error(), archive.Digest(v2)) {
		t.Fatalf("update with a changed origin: %v, want a digest mismatch naming the locked digest", err)
	}
	after, _ := kptpkg.ReadTree(dest)
	if a, r, m := before.Changes(after); len(a)+len(r)+len(m) != 0 {
		t.Fatalf("a failed update changed the package: %v %v %v", a, r, m)
	}
}

func TestGetBadSourcesWriteNothing(t *testing.T) {
	t.Parallel()
	host := ocitest.MemRegistry(t)
	src := newSources(t)
	ctx := context.Background()
	if _, err := src.OCI.Push(ctx, "oci://"+host+"/bp", "/ok", "v1", basens("1"), oci.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	bomb := ocitest.TarGz(t, ocitest.Entry{Name: "Kptfile", Body: ocitest.Kptfile("x")}, ocitest.Entry{Name: "big", Body: strings.Repeat("0", 2<<20)})
	srv := ocitest.NewArchiveServer(t, map[string][]byte{
		"/escape.tgz": ocitest.TarGz(t, ocitest.Entry{Name: "Kptfile", Body: ocitest.Kptfile("x")}, ocitest.Entry{Name: "../../outside.yaml", Body: "x"}),
		"/nokpt.tgz":  ocitest.TarGz(t, ocitest.Entry{Name: "cm.yaml", Body: "x"}),
		"/bomb.tgz":   bomb,
	})
	small, err := sources.New(sources.Options{Getenv: func(string) string { return "" }, Limits: archive.Limits{MaxBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, ref string
		is        error
		msg       string
	}{
		{name: "missing tag", ref: "oci://" + host + "/bp//ok:v7", msg: `no tag "v7" (tags: v1)`},
		{name: "unreachable", ref: "oci://127.0.0.1:1/bp//ok:v1", msg: "registry 127.0.0.1:1"},
		{name: "escape", ref: srv.URL + "/escape.tgz", is: archive.ErrUnsafe, msg: "escape the package directory"},
		{name: "no kptfile", ref: srv.URL + "/nokpt.tgz", is: fetch.ErrNotPackage, msg: "no Kptfile"},
		{name: "bomb", ref: srv.URL + "/bomb.tgz", is: archive.ErrTooLarge, msg: "more than 1048576 bytes"},
		{name: "pin", ref: srv.URL + "/nokpt.tgz#sha256=" + strings.Repeat("0", 64), is: fetch.ErrDigestMismatch, msg: "pins sha256:000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ref, _, err := locator.Parse(tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			parent := t.TempDir()
			dest := filepath.Join(parent, "pkg")
			_, err = Get(ctx, small, dest, GetOptions{Repo: ref.Repo, Dir: ref.Dir, Version: ref.Version})
			if err == nil || !strings.Contains(err.Error(), tc.msg) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("Get error = %v, want %v containing %q", err, tc.is, tc.msg)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Fatalf("a failed get left %v behind", entries)
			}
			if _, err := os.Stat(filepath.Join(parent, "..", "outside.yaml")); err == nil {
				t.Fatal("an archive wrote outside the package")
			}
		})
	}
}

func TestGenericKptfileValidation(t *testing.T) {
	t.Parallel()
	base := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n"
	tests := []struct{ kptfile, msg string }{
		{base + "upstream:\n  type: generic\n", "metadata.annotations[kptbot.dev/upstream-resource-id] is missing"},
		{strings.Replace(base, "name: p\n", "name: p\n  annotations:\n    kptbot.dev/upstream-store-id: oci\n    kptbot.dev/upstream-resource-id: https://h/x.git\n", 1) + "upstream:\n  type: generic\n", "neither an oci:// reference nor an http(s) archive URL"},
		{strings.Replace(base, "name: p\n", "name: p\n  annotations:\n    kptbot.dev/upstream-lock-store-id: oci\n    kptbot.dev/upstream-lock-resource-id: oci://h/r//p:v1\n    kptbot.dev/upstream-lock-resource-version: v1\n", 1) + "upstreamLock:\n  type: generic\n", "is not a sha256 digest"},
	}
	for _, tc := range tests {
		if _, err := kptpkg.DecodeKptfile("Kptfile", []byte(tc.kptfile)); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("DecodeKptfile error = %v, want containing %q\n%s", err, tc.msg, tc.kptfile)
		}
	}
	// An origin type kpt does not know still reads; updating from it is
	// refused with what was expected.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, kptpkg.KptfileName), []byte(base+"upstream:\n  type: helm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := kptpkg.ReadKptfile(dir); err != nil {
		t.Fatalf("a Kptfile with upstream.type helm: %v", err)
	}
	if _, err := Update(context.Background(), fetch.NewClient(), dir, UpdateOptions{}); err == nil || !strings.Contains(err.Error(), `upstream.type "helm": expected git or generic`) {
		t.Fatalf("update from upstream.type helm: %v", err)
	}
}

// TestKptReadsGenericKptfile: the kpt CLI still renders a package whose
// Kptfile records a generic (OCI) upstream, because the generic fields
// are annotations, not fields kpt's strict decoder would reject.
func TestKptReadsGenericKptfile(t *testing.T) {
	t.Parallel()
	kpt, err := exec.LookPath("kpt")
	if err != nil {
		t.Skip("kpt not on PATH: the compatibility check with the kpt CLI is skipped")
	}
	host := ocitest.MemRegistry(t)
	src := newSources(t)
	ctx := context.Background()
	if _, err := src.OCI.Push(ctx, "oci://"+host+"/bp", "/basens", "v1", basens("1"), oci.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "basens")
	if _, err := Get(ctx, src, dest, GetOptions{Repo: "oci://" + host + "/bp", Dir: "/basens", Version: "v1", Strategy: kptfilev1.ResourceMerge}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(kpt, "fn", "render", dest)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "not found in type") {
		t.Fatalf("kpt fn render on a generic-upstream package: %v\n%s\nKptfile:\n%s", err, out, readFile(t, filepath.Join(dest, kptpkg.KptfileName)))
	}
}
