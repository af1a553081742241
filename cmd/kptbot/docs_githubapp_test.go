package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/github/githubtest"
)

// TestDocsGitHubApp follows docs/github-app.md's App setup against a fake
// GitHub in App mode, which checks the App's JWT and installation tokens
// as GitHub does: the page's server configuration as written (only the
// API address, the listen port and the secret files' paths are the
// test's), `kptbot serve`, and signed deliveries carrying the
// installation, from a person's draft pull request to its check run,
// `/kptbot propose`, an approval, the merge and the tag. Every call the
// bot makes to a repository carries the installation's token.
func TestDocsGitHubApp(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/github-app.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml server-config\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/github-app.md has no ```yaml server-config block")
	}
	idm := regexp.MustCompile(`(?m)^\s+appID: (\d+)`).FindSubmatch(m[1])
	if idm == nil {
		t.Fatalf("the page's configuration has no appID; adapt the test:\n%s", m[1])
	}
	appID, _ := strconv.ParseInt(string(idm[1]), 10, 64)
	const installation = 77

	gh := githubtest.New(t)
	app := gh.EnableApp(appID, "kptbot")
	repo := forge.Repo{Forge: forge.GitHub, FullName: "acme/site-a", DefaultBranch: "main"}
	kf := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ns\n"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"%s\"\n"
	gh.Seed(repo, "main", map[string][]byte{"ns/Kptfile": []byte(kf), "ns/cm.yaml": []byte(fmt.Sprintf(cm, "1"))})
	gh.Install(installation, repo.FullName)
	for _, u := range []string{"dana", "alice"} {
		gh.SetPermission(repo, u, "write")
	}

	// dana pushes a branch and opens a draft pull request with her own token.
	ctx := context.Background()
	dana, err := github.NewTokenClient(gh.UserToken("dana"), gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	dana.GitURL = gh.GitURL
	head, err := dana.PushFiles(ctx, repo, "edit", "", "main", map[string][]byte{"ns/cm.yaml": []byte(fmt.Sprintf(cm, "2"))}, "edit")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := dana.OpenChange(ctx, repo, forge.ChangeSpec{Head: "edit", Base: "main", Title: "edit ns", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	gh.SetAuthor(repo, ch.Number, "dana")

	addr := serveAppConfig(t, string(m[1]), gh.URL, app.PrivateKeyPEM)
	deliver := appDeliverer(t, addr, gh, repo, installation)
	deliver("pull_request", "pull_request/opened.payload.json", map[string]any{
		"number": ch.Number, "pull_request.number": ch.Number, "pull_request.draft": true, "pull_request.user.login": "dana",
		"pull_request.head.ref": "edit", "pull_request.head.sha": head, "pull_request.base.ref": "main",
		"pull_request.head.repo.full_name": repo.FullName, "pull_request.base.repo.full_name": repo.FullName, "sender.login": "dana",
	})
	waitFor(t, "the kptbot/ns check run", func() bool {
		c, ok := gh.Check(repo, head, "kptbot/ns")
		return ok && c.Conclusion == "success"
	})
	id := gh.AddComment(repo, ch.Number, "dana", "/kptbot propose")
	deliver("issue_comment", "derived/issue_comment.created.on-pull-request.payload.json", map[string]any{
		"issue.number": ch.Number, "comment.id": id, "comment.body": "/kptbot propose", "comment.user.login": "dana",
		"comment.user.type": "User", "sender.login": "dana",
	})
	waitFor(t, "the pull request marked ready by /kptbot propose", func() bool {
		c, err := dana.GetChange(ctx, repo, ch.Number)
		return err == nil && !c.Draft
	})
	gh.Review(repo, ch.Number, forge.Review{State: forge.ReviewApproved, Reviewer: forge.User{Login: "alice"}, CommitSHA: head})
	deliver("pull_request_review", "derived/pull_request_review.submitted.approved.payload.json", map[string]any{
		"pull_request.number": ch.Number, "review.commit_id": head, "review.user.login": "alice", "review.state": "approved",
		"sender.login": "alice", "pull_request.head.repo.full_name": repo.FullName, "pull_request.base.repo.full_name": repo.FullName,
	})
	var merged forge.Change
	waitFor(t, "the merge and the tag ns/v1", func() bool {
		c, err := dana.GetChange(ctx, repo, ch.Number)
		if err != nil || !c.Merged {
			return false
		}
		merged = c
		tags, err := dana.ListTags(ctx, repo)
		return err == nil && len(tags) == 1 && tags[0].Name == "ns/v1"
	})
	if tags, _ := dana.ListTags(ctx, repo); tags[0].SHA != merged.MergeCommitSHA {
		t.Errorf("ns/v1 at %s, want the merge commit %s", tags[0].SHA, merged.MergeCommitSHA)
	}

	if gh.Minted(installation) == 0 {
		t.Error("no installation token was minted")
	}
	seen := map[string]int{}
	for _, e := range gh.AuthLog() {
		if e.Identity == "" {
			t.Errorf("%s %s was refused: the bot sent no valid credential", e.Method, e.Path)
			continue
		}
		if strings.HasPrefix(e.Identity, "user:") {
			continue // the test acting as a person
		}
		kind := ""
		switch {
		case e.Method == http.MethodPut && strings.HasSuffix(e.Path, fmt.Sprintf("/pulls/%d/merge", ch.Number)):
			kind = "merge"
		case e.Method == http.MethodPost && strings.HasSuffix(e.Path, "/check-runs"):
			kind = "check run"
		case e.Method == http.MethodPost && strings.HasSuffix(e.Path, "/git/refs"):
			kind = "tag"
		case e.Method == "git POST" && strings.HasSuffix(e.Path, "/git-upload-pack"):
			kind = "git fetch"
		default:
			continue
		}
		seen[kind]++
		if e.Identity != fmt.Sprintf("installation:%d", installation) {
			t.Errorf("the bot's %s (%s %s) authenticated as %q, want installation %d", kind, e.Method, e.Path, e.Identity, installation)
		}
	}
	for _, kind := range []string{"merge", "check run", "tag", "git fetch"} {
		if seen[kind] == 0 {
			t.Errorf("the bot made no %s", kind)
		}
	}
}

// serveAppConfig writes the page's App configuration with the test's
// addresses and secret files, starts `kptbot serve` on it and returns its
// address once it is ready.
func serveAppConfig(t *testing.T, cfg, apiURL string, key []byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	for re, repl := range map[string]string{
		`listen: "[^"]*"`:        `listen: "` + addr + `"`,
		`privateKeyFile: \S+`:    "privateKeyFile: " + filepath.Join(dir, "private-key.pem"),
		`webhookSecretFile: \S+`: "webhookSecretFile: " + filepath.Join(dir, "webhook-secret"),
		`github:\n`:              "github:\n  baseURL: " + apiURL + "\n",
	} {
		if !regexp.MustCompile(re).MatchString(cfg) {
			t.Fatalf("the page's configuration has no %s; adapt the test:\n%s", re, cfg)
		}
		cfg = regexp.MustCompile(re).ReplaceAllString(cfg, repl)
	}
	for name, v := range map[string][]byte{"server.yaml": []byte(cfg), "private-key.pem": key, "webhook-secret": []byte(appHookSecret + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), v, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stdout, stderr strings.Builder
	go func() {
		done <- run(ctx, []string{"serve", "--config", filepath.Join(dir, "server.yaml"), "--log-level", "error"}, &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		if i == 400 {
			t.Fatalf("kptbot serve never became ready: %v\n%s", err, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const appHookSecret = "the App's webhook secret"

// appDeliverer returns what sends GitHub's real payload file, made to
// describe repo and the App's installation, as a signed delivery.
func appDeliverer(t *testing.T, addr string, gh *githubtest.Server, repo forge.Repo, installation int64) func(event, file string, set map[string]any) {
	seq := 0
	return func(event, file string, set map[string]any) {
		t.Helper()
		raw, err := os.ReadFile("../../testdata/webhooks/github/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		owner, name, _ := strings.Cut(repo.FullName, "/")
		all := map[string]any{"repository.full_name": repo.FullName, "repository.name": name, "repository.owner.login": owner,
			"repository.clone_url": gh.GitURL + repo.FullName + ".git", "repository.default_branch": "main",
			"installation.id": installation}
		for k, v := range set {
			all[k] = v
		}
		for k, v := range all {
			path := strings.Split(k, ".")
			cur := m
			for _, p := range path[:len(path)-1] {
				next, ok := cur[p].(map[string]any)
				if !ok {
					next = map[string]any{}
					cur[p] = next
				}
				cur = next
			}
			cur[path[len(path)-1]] = v
		}
		body, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		mac := hmac.New(sha256.New, []byte(appHookSecret))
		mac.Write(body)
		seq++
		req, _ := http.NewRequest("POST", "http://"+addr+"/webhooks/github", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("app-%d", seq))
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%s delivery answered %d, want 202", event, resp.StatusCode)
		}
	}
}

// waitFor polls cond until it holds, failing t after a minute and a half.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
