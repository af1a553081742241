package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/github/githubtest"
	"github.com/kptbot/kptbot/internal/fleettest"
)

// serverConfig writes a token-mode server config for a fake GitHub.
func serverConfig(t *testing.T, apiURL, listen string) string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range map[string]string{"token": "ghp_server\n", "hook": "hook-secret\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf("listen: %q\nresyncInterval: 1h\ngithub:\n  baseURL: %s\n  tokenFile: token\n  webhookSecretFile: hook\n  repositories: [acme/site-a]\n", listen, apiURL)
	path := filepath.Join(dir, "server.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// draftPR is a pull request the fake GitHub opened.
type draftPR struct {
	Number int
	Head   struct{ SHA string }
}

// openedDraft seeds acme/site-a with package ns (Kptfile kf), opens a
// draft PR editing it as a person would, and writes the pull_request
// opened payload GitHub would send (from the real payload, rewritten).
func openedDraft(t *testing.T, gh *githubtest.Server, kf string) (forge.Repo, draftPR, string) {
	t.Helper()
	repo := forge.Repo{Forge: forge.GitHub, FullName: "acme/site-a", DefaultBranch: "main"}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"%s\"\n"
	gh.Seed(repo, "main", map[string][]byte{"ns/Kptfile": []byte(kf), "ns/cm.yaml": []byte(fmt.Sprintf(cm, "1"))})
	gh.Seed(repo, "edit", map[string][]byte{"ns/Kptfile": []byte(kf), "ns/cm.yaml": []byte(fmt.Sprintf(cm, "2"))})
	req, _ := http.NewRequest("POST", gh.URL+"/repos/acme/site-a/pulls", strings.NewReader(`{"title":"edit","head":"edit","base":"main","draft":true}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("opening the PR: %v %v", resp, err)
	}
	var pr draftPR
	json.NewDecoder(resp.Body).Decode(&pr)
	resp.Body.Close()
	raw, err := os.ReadFile("../../testdata/webhooks/github/pull_request/opened.payload.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	m["number"] = pr.Number
	p := m["pull_request"].(map[string]any)
	p["number"], p["draft"] = pr.Number, true
	p["head"].(map[string]any)["ref"], p["head"].(map[string]any)["sha"] = "edit", pr.Head.SHA
	p["head"].(map[string]any)["repo"].(map[string]any)["full_name"] = "acme/site-a"
	p["base"].(map[string]any)["repo"].(map[string]any)["full_name"] = "acme/site-a"
	r := m["repository"].(map[string]any)
	r["full_name"], r["name"], r["clone_url"], r["default_branch"] = "acme/site-a", "site-a", gh.GitURL+"acme/site-a.git", "main"
	r["owner"].(map[string]any)["login"] = "acme"
	payload := filepath.Join(t.TempDir(), "opened.json")
	b, _ := json.Marshal(m)
	if err := os.WriteFile(payload, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return repo, pr, payload
}

func TestReplayRendersADraft(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	repo, pr, payload := openedDraft(t, gh, "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ns\npipeline:\n  mutators:\n    - image: set-namespace:v0.4.1\n      configMap:\n        namespace: team-a\n")

	cfg := serverConfig(t, gh.URL, ":0")
	out, stderr, code := kptbot(t, "replay", "--config", cfg, "--forge", "github", "--event", "pull_request", payload, "--log-level", "error")
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, `"name": "kptbot/ns"`) || !strings.Contains(out, `"conclusion": "success"`) {
		t.Errorf("replay outcome = %s", out)
	}
	if c, ok := gh.Check(repo, pr.Head.SHA, "kptbot/ns"); !ok || c.Conclusion != "success" {
		t.Errorf("check run on GitHub = %+v, %v", c, ok)
	}
	if strings.Contains(out+stderr, "ghp_server") {
		t.Error("the token was printed")
	}
	_, stderr, code = kptbot(t, "replay", "--config", cfg, "--forge", "gitlab", "--event", "x", payload)
	if code == 0 || !strings.Contains(stderr, "not configured") {
		t.Errorf("replay on an unconfigured forge: exit %d, %s", code, stderr)
	}
}

func TestServeHealthAndShutdown(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	gh.Seed(forge.Repo{FullName: "acme/site-a"}, "main", map[string][]byte{"README.md": []byte("x\n")})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := serverConfig(t, gh.URL, addr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		var o, e strings.Builder
		done <- run(ctx, []string{"serve", "--config", cfg, "--log-level", "error"}, &o, &e)
	}()
	ready := false
	for i := 0; i < 100 && !ready; i++ {
		time.Sleep(50 * time.Millisecond)
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			ready = resp.StatusCode == http.StatusOK
			resp.Body.Close()
		}
	}
	if !ready {
		t.Fatal("server never became ready")
	}
	resp, err := http.Post("http://"+addr+"/webhooks/github", "application/json", strings.NewReader(`{}`))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned delivery: %v %v, want 401", resp.StatusCode, err)
	}
	resp, err = http.Get("http://" + addr + "/metrics")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("metrics: %v", err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(raw)
	if !strings.Contains(body, `kptbot_webhook_deliveries_total{forge="github",result="rejected"} 1`) {
		t.Errorf("metrics do not count the rejected delivery:\n%.2000s", body)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exited %d after a signal-style shutdown", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not shut down")
	}
}

func TestPlanWritesNothing(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	up := forge.Repo{Forge: forge.GitHub, FullName: "acme/blueprints"}
	kf := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: basens\n"
	sha := gh.Seed(up, "main", map[string][]byte{"basens/Kptfile": []byte(kf), "basens/ns.yaml": []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n")})
	req, _ := http.NewRequest("POST", gh.URL+"/repos/acme/blueprints/git/refs", strings.NewReader(`{"ref":"refs/tags/basens/v1","sha":"`+sha+`"}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("tagging: %v %v", resp, err)
	}
	pv := fleettest.Follower("team-ns")
	gh.Seed(forge.Repo{FullName: "acme/site-a"}, "main", map[string][]byte{"kptbot.yaml": []byte(pv)})
	cfg := serverConfig(t, gh.URL, ":0")
	out, stderr, code := kptbot(t, "plan", "--config", cfg, "acme/site-a")
	if code != 0 || !strings.Contains(out, "team-ns") || !strings.Contains(out, "clone") {
		t.Fatalf("plan: exit %d\n%s%s", code, out, stderr)
	}
	client, err := github.NewClient(nil, gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	branches, err := client.ListBranches(context.Background(), forge.Repo{FullName: "acme/site-a"})
	if err != nil || len(branches) != 1 {
		t.Errorf("branches after plan = %v, %v; want only main (plan writes nothing)", branches, err)
	}
	_, stderr, code = kptbot(t, "plan", "--config", cfg, "acme/nope")
	if code == 0 || !strings.Contains(stderr, "acme/nope") {
		t.Errorf("plan of an unknown repository: exit %d, %s", code, stderr)
	}
}

func TestBotDemo(t *testing.T) {
	t.Parallel()
	out, stderr, code := kptbot(t, "demo")
	if code != 0 {
		t.Fatalf("kptbot demo: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"authored this change and cannot approve it",
		"tagged   acme/blueprints basens/v1",
		"opened   acme/edge-3#1  kptbot: tenant-ns clone acme/blueprints/basens v1",
		"tagged   acme/edge-1 tenant-ns/v1",
		"opened   acme/edge-1#2  kptbot: tenant-ns update acme/blueprints/basens v1 → v2",
		"| acme/edge-2 | change #1 (clone) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "error:") {
		t.Errorf("demo reported an error:\n%s", out)
	}
}

func TestServeRefusesToRunUnverified(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "token"), []byte("ghp_x\n"), 0o600)
	cfg := filepath.Join(dir, "server.yaml")
	os.WriteFile(cfg, []byte("github:\n  tokenFile: token\n"), 0o600)
	_, stderr, code := kptbot(t, "replay", "--config", cfg, "--event", "ping", "x.json")
	if code == 0 || !strings.Contains(stderr, "webhookSecretFile") || !strings.Contains(stderr, "KPTBOT_GITHUB_WEBHOOK_SECRET") {
		t.Errorf("no webhook secret: exit %d, %s", code, stderr)
	}
	_, stderr, code = kptbot(t, "serve", "--config", filepath.Join(dir, "missing.yaml"))
	if code == 0 || !strings.Contains(stderr, "missing.yaml") {
		t.Errorf("missing config: exit %d, %s", code, stderr)
	}
}
