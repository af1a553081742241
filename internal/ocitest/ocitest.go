// Package ocitest provides the upstream servers the OCI and HTTP-archive
// tests run against: go-containerregistry's in-memory registry, a real
// registry (Debian's docker-registry binary, the CNCF distribution
// registry) on a loopback port, an HTTP server for archives, and builders
// for tar.gz and zip archives with arbitrary (also hostile) entries.
package ocitest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// MemRegistry starts go-containerregistry's in-memory registry on a
// loopback port and returns its host:port.
func MemRegistry(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(discardLogger())))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }

// RegistryBinary is where Debian's docker-registry package installs the
// distribution registry.
const RegistryBinary = "docker-registry"

// RealRegistry starts the distribution registry (Debian's docker-registry
// package) with a generated config on 127.0.0.1:<free port> and a temp
// storage directory, and returns its host:port. It skips the test when
// the binary is not installed (.ci/run installs it).
func RealRegistry(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath(RegistryBinary)
	if err != nil {
		t.Skipf("%s not found: install Debian's docker-registry package (apt-get install docker-registry) to run the real-registry tests", RegistryBinary)
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog: {disabled: true}
storage:
  filesystem: {rootdirectory: %s}
  delete: {enabled: true}
http:
  addr: %s
`, filepath.Join(dir, "storage"), addr)
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command(bin, "serve", cfgPath)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		select {
		case <-done:
			t.Fatalf("%s exited before serving: %s", bin, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer on %s within 20s: %v\n%s", bin, addr, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Entry is one archive entry. Type is tar's type flag (tar.TypeReg when
// zero); Link is a link's target.
type Entry struct {
	Name string
	Body string
	Type byte
	Link string
	// Size overrides the header's size (for a lying header).
	Size int64
}

// Files turns a file map into entries in name order.
func Files(files map[string]string) []Entry {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Entry, 0, len(names))
	for _, n := range names {
		out = append(out, Entry{Name: n, Body: files[n]})
	}
	return out
}

// Tar builds an uncompressed tar archive.
func Tar(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Typeflag: e.Type, Linkname: e.Link, Mode: 0o644, Size: int64(len(e.Body))}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if h.Typeflag == tar.TypeDir {
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := io.WriteString(tw, e.Body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TarGz builds a gzip-compressed tar archive.
func TarGz(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	return Gzip(t, Tar(t, entries...))
}

// Gzip compresses b.
func Gzip(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Zip builds a zip archive; a tar.TypeSymlink entry becomes a zip symlink.
func Zip(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.Name, Method: zip.Deflate}
		body := e.Body
		switch e.Type {
		case tar.TypeSymlink:
			h.SetMode(os.ModeSymlink | 0o777)
			body = e.Link
		case tar.TypeDir:
			h.SetMode(os.ModeDir | 0o755)
		default:
			h.SetMode(0o644)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Kptfile is a minimal Kptfile for a package called name.
func Kptfile(name string) string {
	return "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + name + "\n"
}

// ArchiveServer serves files by path on a loopback HTTP server; Set
// changes what it serves while it runs.
type ArchiveServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
	auth  string // the Authorization header of the last request
}

// NewArchiveServer starts a server holding files (path → content).
func NewArchiveServer(t testing.TB, files map[string][]byte) *ArchiveServer {
	t.Helper()
	s := &ArchiveServer{files: map[string][]byte{}}
	for p, b := range files {
		s.files[p] = b
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		b, ok := s.files[r.URL.Path]
		s.auth = r.Header.Get("Authorization")
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

// Set serves b at path.
func (s *ArchiveServer) Set(path string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = b
}

// LastAuth is the Authorization header of the last request.
func (s *ArchiveServer) LastAuth() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth
}
