package action

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// TestInstallScript runs scripts/action-install.sh (the action's install
// step) against a fake release server: the release binary is downloaded,
// checked against checksums.txt, cached, and reported as the step's bin
// output; a tampered download is refused.
func TestInstallScript(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the test release is built for linux")
	}
	for _, tool := range []string{"bash", "curl", "tar", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	const ref = "v9.8.7"
	tarball := fmt.Sprintf("kptbot_9.8.7_linux_%s.tar.gz", runtime.GOARCH)
	fake := []byte("#!/bin/sh\necho \"kptbot v9.8.7 (fake release)\"\n")
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: "kptbot", Mode: 0o755, Size: int64(len(fake))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(fake)
	tw.Close()
	gz.Close()
	sum := sha256.Sum256(tgz.Bytes())
	good := hex.EncodeToString(sum[:]) + "  " + tarball + "\n"

	run := func(t *testing.T, checksums string) (string, string, *atomic.Int32, error) {
		var downloads atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/kptbot/kptbot/releases/download/" + ref + "/" + tarball:
				downloads.Add(1)
				w.Write(tgz.Bytes())
			case "/kptbot/kptbot/releases/download/" + ref + "/checksums.txt":
				fmt.Fprint(w, "0000  kptbot_9.8.7_darwin_arm64.tar.gz\n"+checksums)
			default:
				http.NotFound(w, r)
			}
		}))
		t.Cleanup(srv.Close)
		dir := t.TempDir()
		out := filepath.Join(dir, "output")
		cache := filepath.Join(dir, "toolcache")
		var stdout bytes.Buffer
		var err error
		for i := 0; i < 2 && err == nil; i++ { // the second run finds the cache
			cmd := exec.Command("bash", "../scripts/action-install.sh")
			cmd.Env = append(os.Environ(), "ACTION_REF="+ref, "ACTION_PATH=..", "RUNNER_TEMP="+dir,
				"RUNNER_TOOL_CACHE="+cache, "GITHUB_SERVER_URL="+srv.URL, "GITHUB_OUTPUT="+out)
			cmd.Stdout, cmd.Stderr = &stdout, &stdout
			err = cmd.Run()
		}
		b, _ := os.ReadFile(out)
		return string(b), stdout.String(), &downloads, err
	}

	t.Run("release", func(t *testing.T) {
		t.Parallel()
		outputs, log, downloads, err := run(t, good)
		if err != nil {
			t.Fatalf("install: %v\n%s", err, log)
		}
		lines := strings.Split(strings.TrimSpace(outputs), "\n")
		if len(lines) != 2 || lines[0] != lines[1] || !strings.HasPrefix(lines[0], "bin=") ||
			!strings.HasSuffix(lines[0], "/kptbot/9.8.7/"+runtime.GOARCH+"/kptbot") {
			t.Fatalf("GITHUB_OUTPUT:\n%s", outputs)
		}
		if !strings.Contains(log, "kptbot v9.8.7 (fake release)") {
			t.Errorf("the installed binary was not run:\n%s", log)
		}
		if n := downloads.Load(); n != 1 {
			t.Errorf("%d downloads for two installs: the tool cache is not used", n)
		}
	})
	t.Run("tampered", func(t *testing.T) {
		t.Parallel()
		_, log, _, err := run(t, strings.Repeat("ab", 32)+"  "+tarball+"\n")
		if err == nil || !strings.Contains(log, "::error title=kptbot::"+tarball+" does not match the release's checksums.txt") {
			t.Fatalf("a tampered download was accepted: %v\n%s", err, log)
		}
	})
}
