package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge/github/githubtest"
)

// TestDocsTryIt follows docs/github-app.md's "Trying the server before
// creating the App" against a fake GitHub: the page's configuration as
// written (only the API address, the listen port and the secret files'
// contents are the test's), `kptbot serve`, a signed pull_request
// delivery for a draft pull request, and the kptbot/<package> check run.
func TestDocsTryIt(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/github-app.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml server-config try-it\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/github-app.md has no ```yaml server-config try-it block")
	}
	gh := githubtest.New(t)
	repo, pr, payload := openedDraft(t, gh, "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ns\n")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := strings.Replace(string(m[1]), `listen: "127.0.0.1:8080"`, `listen: "`+addr+`"`, 1)
	cfg = strings.Replace(cfg, "github:\n", "github:\n  baseURL: "+gh.URL+"\n", 1)
	if !strings.Contains(cfg, addr) || !strings.Contains(cfg, "repositories: [acme/site-a]") {
		t.Fatalf("the page's configuration changed shape; adapt the test:\n%s", cfg)
	}
	dir := t.TempDir()
	const secret = "a random string"
	for name, v := range map[string]string{"server.yaml": cfg, "token": "ghp_tryit\n", "webhook-secret": secret + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stdout, stderr strings.Builder
	go func() {
		done <- run(ctx, []string{"serve", "--config", filepath.Join(dir, "server.yaml"), "--log-level", "error"}, &stdout, &stderr)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if i == 200 {
			t.Fatalf("kptbot serve never became ready: %v\n%s", err, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	body, err := os.ReadFile(payload)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req, _ := http.NewRequest("POST", "http://"+addr+"/webhooks/github", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-GitHub-Delivery", "tryit-1")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("signed delivery answered %d, want 202", resp.StatusCode)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if c, ok := gh.Check(repo, pr.Head.SHA, "kptbot/ns"); ok && c.Conclusion != "" {
			if c.Conclusion != "success" {
				t.Errorf("check run %+v", c)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no kptbot/ns check run after the delivery\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
