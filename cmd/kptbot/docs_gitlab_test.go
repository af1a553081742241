package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitlab"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
)

// TestDocsGitLabGroup follows docs/gitlab.md against a fake GitLab: the
// page's server configuration (its projects, with the API address and the
// secret files' paths the test's), `kptbot serve`, the webhook the page
// sets up delivering a draft merge request's "Merge Request Hook" with the
// secret token, and the kptbot/<package> commit status on its head.
func TestDocsGitLabGroup(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/gitlab.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml server-config\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/gitlab.md has no ```yaml server-config block")
	}
	gl := gitlabtest.New(t)
	var projects []forge.Repo
	for _, p := range regexp.MustCompile(`(?m)^\s+projects: \[(.*)\]`).FindStringSubmatch(string(m[1]))[1:] {
		for _, name := range strings.Split(p, ",") {
			projects = append(projects, forge.Repo{Forge: forge.GitLab, FullName: strings.TrimSpace(name), DefaultBranch: "main"})
		}
	}
	if len(projects) == 0 {
		t.Fatalf("the page's configuration lists no projects:\n%s", m[1])
	}
	kf := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ns\n"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"%s\"\n"
	for _, p := range projects {
		gl.Seed(p, "main", map[string][]byte{"ns/Kptfile": []byte(kf), "ns/cm.yaml": []byte(fmt.Sprintf(cm, "1"))})
	}
	repo := projects[0]
	repo.ID, repo.CloneURL = gl.ProjectID(repo), gl.CloneURL(repo)

	dir := t.TempDir()
	const secret = "4f1c0ffee"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := string(m[1])
	for re, repl := range map[string]string{
		`listen: "[^"]*"`:        `listen: "` + addr + `"`,
		`baseURL: \S+`:           "baseURL: " + gl.URL,
		`tokenFile: \S+`:         "tokenFile: token",
		`webhookSecretFile: \S+`: "webhookSecretFile: webhook-secret",
	} {
		if !regexp.MustCompile(re).MatchString(cfg) {
			t.Fatalf("the page's configuration has no %s; adapt the test:\n%s", re, cfg)
		}
		cfg = regexp.MustCompile(re).ReplaceAllString(cfg, repl)
	}
	for name, v := range map[string]string{"server.yaml": cfg, "token": gitlabtest.Token + "\n", "webhook-secret": secret + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// A person's draft merge request changing the package.
	ctx := context.Background()
	c, err := gitlab.NewClient(gl.HTTPClient, gl.URL, gitlabtest.Token)
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.PushFiles(ctx, repo, "edit", "", "main", map[string][]byte{"ns/cm.yaml": []byte(fmt.Sprintf(cm, "2"))}, "edit")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.OpenChange(ctx, repo, forge.ChangeSpec{Head: "edit", Base: "main", Title: "edit ns", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	body := gitlabMRHook(t, gl, repo, ch.Number, head)

	srvCtx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stdout, stderr strings.Builder
	go func() {
		done <- run(srvCtx, []string{"serve", "--config", filepath.Join(dir, "server.yaml"), "--log-level", "error"}, &stdout, &stderr)
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
		if i == 400 {
			t.Fatalf("kptbot serve never became ready: %v\n%s", err, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	req, _ := http.NewRequest("POST", "http://"+addr+"/webhooks/gitlab", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(gitlab.HeaderEvent, "Merge Request Hook")
	req.Header.Set(gitlab.HeaderIdempotencyKey, "docs-gitlab-1")
	req.Header.Set(gitlab.HeaderToken, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("the hook answered %d, want 202\n%s", resp.StatusCode, stderr.String())
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		if st, ok := gl.Status(repo, head, "kptbot/ns"); ok && st.State != "pending" && st.State != "running" {
			if st.State != "success" {
				t.Errorf("commit status %+v", st)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no kptbot/ns commit status after the hook (statuses %v)\n%s", gl.Statuses(repo, head), stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// gitlabMRHook is GitLab's real "Merge Request Hook" payload, opened, made
// to describe merge request iid of repo at head.
func gitlabMRHook(t *testing.T, gl *gitlabtest.Server, repo forge.Repo, iid int, head string) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/webhooks/gitlab/merge_request.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	mr := gl.MergeRequest(repo, iid)
	web := "https://gitlab.example/" + repo.FullName
	set := map[string]any{
		"project.id": repo.ID, "project.path_with_namespace": repo.FullName, "project.default_branch": "main",
		"project.git_http_url": repo.CloneURL, "project.http_url": repo.CloneURL, "project.url": repo.CloneURL, "project.web_url": web,
		"object_attributes.iid": iid, "object_attributes.id": iid + 5000, "object_attributes.title": mr.Title,
		"object_attributes.draft": true, "object_attributes.work_in_progress": true, "object_attributes.state": mr.State,
		"object_attributes.source_branch": mr.Source, "object_attributes.target_branch": mr.Target,
		"object_attributes.source_project_id": repo.ID, "object_attributes.target_project_id": repo.ID,
		"object_attributes.last_commit.id": head, "object_attributes.action": "open",
		"user.username": "alice", "user.name": "alice", "user.id": gl.UserID("alice"),
	}
	for k, v := range set {
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
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
