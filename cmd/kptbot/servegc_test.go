package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github/githubtest"
	"github.com/kptbot/kptbot/internal/gcpolicy"
)

// TestServeGC runs `kptbot serve` and reads the collector's settings it
// left: the server's target (not the CLI's 50) and the --memory-limit
// asked for; a bad size is refused naming the flag. It changes the test
// process's GC settings, so it does not run in parallel and restores them.
func TestServeGC(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: the user's settings win")
	}
	oldPct, oldLimit := debug.SetGCPercent(gcpolicy.CLIPercent), debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPct)
		debug.SetMemoryLimit(oldLimit)
	})
	gh := githubtest.New(t)
	gh.Seed(forge.Repo{FullName: "acme/site-a"}, "main", map[string][]byte{"README.md": []byte("x\n")})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := serverConfig(t, gh.URL, addr)

	// Bounded: were the flag not checked, serve would run until cancelled.
	bad, cancelBad := context.WithTimeout(context.Background(), 5*time.Second)
	var o, e strings.Builder
	code := run(bad, []string{"serve", "--config", cfg, "--log-level", "error", "--memory-limit", "1G"}, &o, &e)
	cancelBad()
	stderr := e.String()
	if code == 0 || !strings.Contains(stderr, `--memory-limit "1G"`) {
		t.Errorf("--memory-limit 1G: exit %d, stderr %q; want a failure naming the flag", code, stderr)
	}

	debug.SetGCPercent(gcpolicy.CLIPercent)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		var o, e strings.Builder
		done <- run(ctx, []string{"serve", "--config", cfg, "--log-level", "error", "--memory-limit", "900MiB"}, &o, &e)
	}()
	defer func() { cancel(); <-done }()
	for i := 0; ; i++ {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if i == 200 {
			t.Fatal("serve never answered")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := debug.SetGCPercent(gcpolicy.ServerPercent); got != gcpolicy.ServerPercent {
		t.Errorf("serve runs the collector at GOGC %d, want %d", got, gcpolicy.ServerPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != 900<<20 {
		t.Errorf("serve's memory limit is %d, want 900MiB", got)
	}
}
