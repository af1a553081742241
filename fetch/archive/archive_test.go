package archive

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/internal/ocitest"
)

type E = ocitest.Entry

func TestExtractRefusesHostileArchives(t *testing.T) {
	t.Parallel()
	small := Limits{MaxBytes: 64 << 10, MaxFiles: 5}
	zeros := strings.Repeat("\x00", 1<<20)
	tests := []struct {
		name    string
		zip     bool
		entries []E
		limits  Limits
		want    error
		msg     string
	}{
		{name: "dotdot", entries: []E{{Name: "pkg/../../evil", Body: "x"}}, want: ErrUnsafe, msg: `"pkg/../../evil" contains ".."`},
		{name: "absolute", entries: []E{{Name: "/etc/cron.d/x", Body: "x"}}, want: ErrUnsafe, msg: "absolute path"},
		{name: "symlink out", entries: []E{{Name: "a/link", Type: tar.TypeSymlink, Link: "../../etc/passwd"}}, want: ErrUnsafe, msg: "outside the package"},
		{name: "symlink absolute", entries: []E{{Name: "link", Type: tar.TypeSymlink, Link: "/etc/passwd"}}, want: ErrUnsafe, msg: "absolute path"},
		{name: "hardlink out", entries: []E{{Name: "h", Type: tar.TypeLink, Link: "../x"}}, want: ErrUnsafe, msg: "outside the package"},
		{name: "fifo", entries: []E{{Name: "p", Type: tar.TypeFifo}}, want: ErrUnsafe, msg: "special file"},
		{name: "backslash", entries: []E{{Name: `..\evil`, Body: "x"}}, want: ErrUnsafe, msg: "backslashes"},
		{name: "whiteout", entries: []E{{Name: ".wh.Kptfile"}}, want: ErrUnsafe, msg: "whiteout"},
		{name: "duplicate", entries: []E{{Name: "a", Body: "1"}, {Name: "./a", Body: "2"}}, want: ErrUnsafe, msg: "appears twice"},
		{name: "bomb", entries: []E{{Name: "zeros", Body: zeros}}, limits: small, want: ErrTooLarge, msg: "more than 65536 bytes"},
		{name: "many files", entries: []E{{Name: "1"}, {Name: "2"}, {Name: "3"}, {Name: "4"}, {Name: "5"}, {Name: "6"}}, limits: small, want: ErrTooLarge, msg: "more than 5 files"},
		{name: "link amplification", entries: []E{{Name: "a", Body: strings.Repeat("y", 40<<10)}, {Name: "b", Type: tar.TypeLink, Link: "a"}}, limits: small, want: ErrTooLarge, msg: `link "b"`},
		{name: "zip dotdot", zip: true, entries: []E{{Name: "../evil", Body: "x"}}, want: ErrUnsafe, msg: `contains ".."`},
		{name: "zip symlink out", zip: true, entries: []E{{Name: "l", Type: tar.TypeSymlink, Link: "../../x"}}, want: ErrUnsafe, msg: "outside the package"},
		{name: "zip bomb", zip: true, entries: []E{{Name: "zeros", Body: zeros}}, limits: small, want: ErrTooLarge, msg: "bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var err error
			if tc.zip {
				_, err = Zip(ocitest.Zip(t, tc.entries...), tc.limits)
			} else {
				_, err = TarGz(bytes.NewReader(ocitest.TarGz(t, tc.entries...)), tc.limits)
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error = %v, want %v containing %q", err, tc.want, tc.msg)
			}
		})
	}
}

func TestExtractKeepsLinksInside(t *testing.T) {
	t.Parallel()
	entries := []E{
		{Name: "bp-1.0/", Type: tar.TypeDir},
		{Name: "bp-1.0/Kptfile", Body: "k"},
		{Name: "bp-1.0/cm.yaml", Body: "cm"},
		{Name: "bp-1.0/sub/alias.yaml", Type: tar.TypeSymlink, Link: "../cm.yaml"},
		{Name: "bp-1.0/hard.yaml", Type: tar.TypeLink, Link: "bp-1.0/cm.yaml"},
		{Name: "bp-1.0/dangling", Type: tar.TypeSymlink, Link: "nothing"},
	}
	want := Files{"Kptfile": []byte("k"), "cm.yaml": []byte("cm"), "sub/alias.yaml": []byte("cm"), "hard.yaml": []byte("cm")}
	for name, extract := range map[string]func() (Files, error){
		"tar": func() (Files, error) { return TarGz(bytes.NewReader(ocitest.TarGz(t, entries...)), Limits{}) },
		"zip": func() (Files, error) { return Zip(ocitest.Zip(t, entries[:4]...), Limits{}) },
	} {
		got, err := extract()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got = StripSingleRoot(got)
		w := want
		if name == "zip" {
			w = Files{"Kptfile": []byte("k"), "cm.yaml": []byte("cm"), "sub/alias.yaml": []byte("cm")}
		}
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
}

func TestLayersApplyInOrder(t *testing.T) {
	t.Parallel()
	l1 := ocitest.Tar(t, E{Name: "Kptfile", Body: "k1"}, E{Name: "old.yaml", Body: "o"}, E{Name: "d/x", Body: "x"})
	l2 := ocitest.Tar(t, E{Name: "Kptfile", Body: "k2"}, E{Name: ".wh.old.yaml"}, E{Name: "d/.wh..wh..opq"})
	open := func(b []byte) func() (io.ReadCloser, error) {
		return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	got, err := Layers(Limits{}, open(l1), open(l2))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Files{"Kptfile": []byte("k2")}, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}

func TestHTTPFetch(t *testing.T) {
	t.Parallel()
	pkg := ocitest.Files(map[string]string{"basens/Kptfile": ocitest.Kptfile("basens"), "basens/ns.yaml": "kind: Namespace\n", "README.md": "hi"})
	v1 := ocitest.TarGz(t, pkg...)
	v2 := ocitest.Zip(t, append(pkg, E{Name: "basens/extra.yaml", Body: "x: 1\n"})...)
	srv := ocitest.NewArchiveServer(t, map[string][]byte{
		"/bp-v1.tar.gz":   v1,
		"/bp-v2.zip":      v2,
		"/dl/v1/bp.zip":   v2,
		"/notpkg.tar.gz":  ocitest.TarGz(t, E{Name: "README.md", Body: "hi"}),
		"/garbage.tar.gz": []byte("this is not gzip"),
	})
	c := &Client{}
	ctx := context.Background()

	files, res, err := c.Fetch(ctx, srv.URL+"/bp-v1.tar.gz", "/basens", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit != Digest(v1) || len(files) != 2 || string(files["ns.yaml"]) != "kind: Namespace\n" {
		t.Fatalf("Fetch = %v files, %+v; want basens's 2 files at %s", len(files), res, Digest(v1))
	}
	// A pin that matches passes; one that does not is a digest mismatch.
	if _, _, err := c.Fetch(ctx, srv.URL+"/bp-v1.tar.gz#sha256="+strings.TrimPrefix(Digest(v1), "sha256:"), "/basens", ""); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Fetch(ctx, srv.URL+"/bp-v1.tar.gz#sha256="+strings.TrimPrefix(Digest(v2), "sha256:"), "/basens", "")
	if !errors.Is(err, fetch.ErrDigestMismatch) || !strings.Contains(err.Error(), Digest(v1)) {
		t.Fatalf("pin mismatch error = %v, want ErrDigestMismatch naming the digest found", err)
	}
	// Templates: a version fills the URL; Latest finds the highest existing.
	files, res, err = c.Fetch(ctx, srv.URL+"/bp-{version}.zip", "/basens", "v2")
	if err != nil || len(files) != 3 || res.Ref != "v2" {
		t.Fatalf("template fetch = %d files, %+v, %v", len(files), res, err)
	}
	latest, err := c.Latest(ctx, srv.URL+"/dl/{version}/bp.zip", []string{"v1", "v3", "v2"})
	if err != nil || latest != "v1" {
		t.Fatalf("Latest = %q, %v; want v1 (v2 and v3 do not exist)", latest, err)
	}

	bad := []struct {
		repo, dir, version string
		is                 error
		msg                string
	}{
		{repo: srv.URL + "/notpkg.tar.gz", dir: "/", is: fetch.ErrNotPackage, msg: "no Kptfile"},
		{repo: srv.URL + "/bp-v1.tar.gz", dir: "/nope", msg: `package directory "/nope" not found (the archive holds README.md, basens/)`},
		{repo: srv.URL + "/missing.tar.gz", dir: "/", msg: "HTTP 404 Not Found"},
		{repo: srv.URL + "/garbage.tar.gz", dir: "/", msg: "expected a .tar.gz archive"},
		{repo: srv.URL + "/bp-{version}.zip", dir: "/", msg: "no version was given"},
		{repo: srv.URL + "/bp-{version}.zip", dir: "/", version: "../x", msg: "expected letters"},
		{repo: srv.URL + "/bp-v1.tar.gz", dir: "/", version: "v2", msg: "no {version} placeholder"},
		{repo: "http://example.com/bp.tar.gz", dir: "/", msg: "refusing plain http to example.com"},
		{repo: "https://127.0.0.1:1/bp.tar.gz", dir: "/", msg: "fetching archive https://127.0.0.1:1/bp.tar.gz"},
	}
	for _, b := range bad {
		_, _, err := c.Fetch(ctx, b.repo, b.dir, b.version)
		if err == nil || !strings.Contains(err.Error(), b.msg) || (b.is != nil && !errors.Is(err, b.is)) {
			t.Errorf("Fetch(%s, %s, %q) error = %v, want %v containing %q", b.repo, b.dir, b.version, err, b.is, b.msg)
		}
	}
	// Downloads are capped before unpacking.
	tiny := &Client{Limits: Limits{MaxBytes: 100}}
	if _, _, err := tiny.Fetch(ctx, srv.URL+"/bp-v1.tar.gz", "/basens", ""); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("capped download error = %v, want ErrTooLarge", err)
	}
}

func TestHTTPTokenOnlyToItsHosts(t *testing.T) {
	t.Parallel()
	srv := ocitest.NewArchiveServer(t, map[string][]byte{"/bp.tar.gz": ocitest.TarGz(t, E{Name: "Kptfile", Body: ocitest.Kptfile("bp")})})
	ctx := context.Background()
	other := &Client{Token: "s3cret", TokenHosts: []string{"example.com"}}
	if _, _, err := other.Fetch(ctx, srv.URL+"/bp.tar.gz", "/", ""); err != nil {
		t.Fatal(err)
	}
	if got := srv.LastAuth(); got != "" {
		t.Fatalf("token sent to a host it was not given for: Authorization %q", got)
	}
	mine := &Client{Token: "s3cret", TokenHosts: []string{"127.0.0.1"}}
	if _, _, err := mine.Fetch(ctx, srv.URL+"/bp.tar.gz", "/", ""); err != nil {
		t.Fatal(err)
	}
	if got := srv.LastAuth(); got != "Bearer s3cret" {
		t.Fatalf("Authorization = %q, want the bearer token", got)
	}
}
