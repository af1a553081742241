package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitlab"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
	"github.com/kptbot/kptbot/forge/ratelimit"
)

const glHookSecret = "e2e-gitlab-webhook-token"

// glWorld is one fake GitLab with a kptbot server in front of it, fed
// deliveries built from GitLab's real webhook payloads over HTTP.
type glWorld struct {
	t    *testing.T
	gl   *gitlabtest.Server
	repo forge.Repo
	srv  *httptest.Server // replica 0's
	done chan struct{}
	seq  atomic.Int64
	bot  *bot.Bot // replica 0's
	// replicas are the bot servers in front of the one GitLab, each with
	// its own adapter, Bot and delivery dedup (scenario 6).
	replicas []*httptest.Server
	servers  []*Server

	mu sync.Mutex
	// mergeSHAs are the sha parameters of the merge calls GitLab received.
	mergeSHAs []string
}

// approversConfig makes the GitLab group acme/platform the approvers.
const approversConfig = `apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata:
  name: edge-1
spec:
  approvals:
    teams: [acme/platform]
`

func newGLWorld(t *testing.T) *glWorld { return newGLWorldReplicas(t, 1) }

func newGLWorldReplicas(t *testing.T, replicas int) *glWorld {
	t.Helper()
	w := &glWorld{t: t, gl: gitlabtest.New(t), done: make(chan struct{}, 100)}
	w.repo = forge.Repo{Forge: forge.GitLab, FullName: "acme/sites/edge-1", DefaultBranch: "main"}
	w.gl.Seed(w.repo, "main", map[string][]byte{"pkgs/ns/Kptfile": []byte(kptfile), "pkgs/ns/cm.yaml": []byte(configMap), "kptbot.yaml": []byte(approversConfig)})
	w.repo.ID, w.repo.CloneURL = w.gl.ProjectID(w.repo), w.gl.CloneURL(w.repo)
	w.gl.AddGroupMember("acme", "dana", gitlabtest.Developer) // write on every project of acme
	for _, u := range []string{"alice", "dana"} {
		w.gl.AddGroupMember("acme/platform", u, gitlabtest.Developer)
	}
	w.gl.SetAccess(w.repo, "alice", gitlabtest.Developer)
	w.gl.SetAccess(w.repo, "mallory", gitlabtest.Reporter)
	w.gl.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/merge") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var in struct{ SHA string }
			json.Unmarshal(body, &in)
			w.mu.Lock()
			w.mergeSHAs = append(w.mergeSHAs, in.SHA)
			w.mu.Unlock()
		}
		return false
	})

	for i := 0; i < replicas; i++ {
		// The bot's GitHub login stays the default; on GitLab it is the
		// token's user, whose notes alone hold the bot's state.
		b, err := newBot(bot.Options{Forges: map[string]forge.Resolver{forge.GitLab: forge.Static(w.client())}, Name: "kptbot", Login: "kptbot[bot]",
			Logins: map[string]string{forge.GitLab: gitlabtest.BotUsername}})
		if err != nil {
			t.Fatal(err)
		}
		s := New(Options{Handler: doneHandler{Handler: b, done: w.done}, Workers: 2, QueueSize: 10,
			Parsers: map[string]WebhookParser{forge.GitLab: func(r *http.Request) (forge.Event, error) {
				return gitlab.ParseWebhook(r, []byte(glHookSecret), 25<<20)
			}}})
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() { s.Run(ctx); close(stopped) }()
		srv := httptest.NewServer(s.Router())
		t.Cleanup(func() { srv.Close(); cancel(); <-stopped })
		w.replicas = append(w.replicas, srv)
		w.servers = append(w.servers, s)
		if i == 0 {
			w.bot, w.srv = b, srv
		}
	}
	return w
}

// client is an adapter acting as the bot's token (a person's pushes and
// merge requests are made with it too, then attributed with SetAuthor).
func (w *glWorld) client() *gitlab.Client {
	// Retries of 5xx answers are kept short: the tests inject failures.
	c, err := gitlab.NewClient(w.gl.HTTPClient, w.gl.URL, gitlabtest.Token, gitlab.WithLimits(ratelimit.Limits{
		PerMinute: 6000, MaxAttempts: 2, BaseBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}))
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// payload loads a real GitLab webhook payload and sets fields on it
// (dotted paths) so that it describes this world.
func (w *glWorld) payload(file string, set map[string]any) []byte {
	w.t.Helper()
	raw, err := os.ReadFile("../testdata/webhooks/gitlab/" + file)
	if err != nil {
		w.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		w.t.Fatal(err)
	}
	web := "https://gitlab.example/" + w.repo.FullName
	base := map[string]any{
		"project.id": w.repo.ID, "project.path_with_namespace": w.repo.FullName, "project.name": "edge-1", "project.namespace": "sites",
		"project.git_http_url": w.repo.CloneURL, "project.http_url": w.repo.CloneURL, "project.url": w.repo.CloneURL,
		"project.git_ssh_url": "git@gitlab.example:" + w.repo.FullName + ".git", "project.ssh_url": "git@gitlab.example:" + w.repo.FullName + ".git",
		"project.web_url": web, "project.homepage": web, "project.default_branch": "main",
	}
	for k, v := range set {
		base[k] = v
	}
	for k, v := range base {
		setPath(m, strings.Split(k, "."), v)
	}
	out, err := json.Marshal(m)
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

// mrFields describes merge request iid at head, under prefix
// (object_attributes in a merge request hook, merge_request in a note hook).
func (w *glWorld) mrFields(prefix string, iid int, head string, author string) map[string]any {
	mr := w.gl.MergeRequest(w.repo, iid)
	draft := strings.HasPrefix(mr.Title, "Draft:")
	fields := map[string]any{
		"iid": iid, "id": iid + 5000, "title": mr.Title, "draft": draft, "work_in_progress": draft, "state": mr.State,
		"source_branch": mr.Source, "target_branch": mr.Target, "source_project_id": w.repo.ID, "target_project_id": w.repo.ID,
		"last_commit.id": head, "author_id": w.gl.UserID(author), "url": fmt.Sprintf("https://gitlab.example/%s/-/merge_requests/%d", w.repo.FullName, iid),
	}
	out := map[string]any{}
	for k, v := range fields {
		out[prefix+"."+k] = v
	}
	return out
}

func (w *glWorld) user(login string) map[string]any {
	return map[string]any{"user.username": login, "user.name": login, "user.id": w.gl.UserID(login), "user.email": login + "@example.com"}
}

func merge(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// deliver POSTs a delivery with GitLab's headers and waits until it has
// been handled when it was queued; it returns the HTTP status.
func (w *glWorld) deliver(hook, key, token string, body []byte) int {
	w.t.Helper()
	return w.deliverTo(0, hook, key, token, body)
}

// deliverTo is deliver to replica i.
func (w *glWorld) deliverTo(i int, hook, key, token string, body []byte) int {
	w.t.Helper()
	req, _ := http.NewRequest("POST", w.replicas[i].URL+"/webhooks/gitlab", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(gitlab.HeaderEvent, hook)
	req.Header.Set(gitlab.HeaderIdempotencyKey, key)
	req.Header.Set(gitlab.HeaderEventUUID, key)
	if token != "" {
		req.Header.Set(gitlab.HeaderToken, token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusAccepted {
		select {
		case <-w.done:
		case <-time.After(60 * time.Second):
			w.t.Fatalf("delivery %s (%s) was not handled", key, hook)
		}
		// and what it queued (a fan-out's jobs) has run
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for _, s := range w.servers {
			if err := s.WaitIdle(ctx); err != nil {
				w.t.Fatalf("delivery %s (%s): the work it queued did not finish: %v", key, hook, err)
			}
		}
	}
	return resp.StatusCode
}

func (w *glWorld) key() string { return fmt.Sprintf("idempotency-%d", w.seq.Add(1)) }

// openHumanDraft pushes a branch and opens a Draft MR as author would,
// and delivers GitLab's "open" hook.
func (w *glWorld) openHumanDraft(author string) (iid int, head string) {
	w.t.Helper()
	ctx := context.Background()
	c := w.client()
	cm := strings.Replace(configMap, `replicas: "1"`, `replicas: "3"`, 1)
	head, err := c.PushFiles(ctx, w.repo, "scale", "", "main", map[string][]byte{"pkgs/ns/cm.yaml": []byte(cm)}, "scale to 3")
	if err != nil {
		w.t.Fatal(err)
	}
	ch, err := c.OpenChange(ctx, w.repo, forge.ChangeSpec{Head: "scale", Base: "main", Title: "scale ns", Draft: true})
	if err != nil {
		w.t.Fatal(err)
	}
	w.gl.SetAuthor(w.repo, ch.Number, author)
	body := w.payload("merge_request.json", merge(w.user(author), w.mrFields("object_attributes", ch.Number, head, author),
		map[string]any{"object_attributes.action": "open", "object_attributes.system": false}))
	if st := w.deliver("Merge Request Hook", w.key(), glHookSecret, body); st != http.StatusAccepted {
		w.t.Fatalf("open delivery: HTTP %d", st)
	}
	return ch.Number, head
}

// notePayload adds a note by who, as in the web UI, and returns its hook.
func (w *glWorld) notePayload(iid int, head, author, who, text string) []byte {
	id := w.gl.AddNote(w.repo, iid, who, text)
	return w.payload("note_merge_request.json", merge(w.user(who), w.mrFields("merge_request", iid, head, author), map[string]any{
		"project_id": w.repo.ID, "object_attributes.id": id, "object_attributes.note": text, "object_attributes.description": text,
		"object_attributes.author_id": w.gl.UserID(who), "object_attributes.noteable_id": iid + 5000, "object_attributes.project_id": w.repo.ID,
		"object_attributes.action": "create", "object_attributes.system": false,
	}))
}

// approvalPayload approves as who (GitLab's Approve button) and returns
// the merge request hook GitLab sends for it.
func (w *glWorld) approvalPayload(iid int, head, author, who string) []byte {
	w.gl.Approve(w.repo, iid, who)
	return w.payload("derived/merge_request_approved.json", merge(w.user(who), w.mrFields("object_attributes", iid, head, author),
		map[string]any{"object_attributes.action": "approved"}))
}

func (w *glWorld) botNotes(iid int) []string {
	var out []string
	for _, n := range w.gl.MergeRequest(w.repo, iid).Notes {
		if n.Author == gitlabtest.BotUsername && !n.System {
			out = append(out, n.Body)
		}
	}
	return out
}

func (w *glWorld) tags() []forge.Tag {
	tags, err := w.client().ListTags(context.Background(), w.repo)
	if err != nil {
		w.t.Fatal(err)
	}
	return tags
}

// TestGitLabLifecycleEndToEnd is issue 5's scenario 8 (1, 3 and 4 on
// GitLab): a person's Draft MR is proposed by a note, refused for a
// Reporter's command and for the author's own approval, approved by a
// member of the approvers' group, merged with the approved SHA pinned and
// tagged — once, though GitLab delivers the approval hook three times —
// through real payload shapes, the webhook server, the GitLab adapter,
// GitLab's approvals API and real git.
func TestGitLabLifecycleEndToEnd(t *testing.T) {
	t.Parallel()
	w := newGLWorld(t)
	n, head := w.openHumanDraft("dana")
	if st, ok := w.gl.Status(w.repo, head, "kptbot/pkgs/ns"); !ok || st.State != "success" || st.Description != "rendered" {
		t.Fatalf("commit status on the draft = %+v, %v; want success, rendered", st, ok)
	}

	// Without the webhook's token, or with a wrong one: refused, unread.
	propose := w.notePayload(n, head, "dana", "dana", "/kptbot propose")
	for _, token := range []string{"", "wrong-token"} {
		if st := w.deliver("Note Hook", w.key(), token, propose); st != http.StatusUnauthorized {
			t.Fatalf("delivery with token %q: HTTP %d, want 401", token, st)
		}
	}
	if mr := w.gl.MergeRequest(w.repo, n); mr.Title != "Draft: scale ns" {
		t.Fatalf("an unauthenticated delivery changed the MR: title %q", mr.Title)
	}
	if st := w.deliver("Note Hook", w.key(), glHookSecret, propose); st != http.StatusAccepted {
		t.Fatalf("propose: HTTP %d", st)
	}
	mr := w.gl.MergeRequest(w.repo, n)
	if mr.Title != "scale ns" {
		t.Fatalf("after /kptbot propose the MR title is %q, want the Draft: prefix gone", mr.Title)
	}
	for _, note := range mr.Notes {
		if note.Body == "/kptbot propose" && (len(note.Awards) != 1 || note.Awards[0] != "eyes") {
			t.Errorf("the propose note has awards %v, want eyes (received)", note.Awards)
		}
	}

	// Scenario 4: a Reporter's command and the author's own approval.
	w.deliver("Note Hook", w.key(), glHookSecret, w.notePayload(n, head, "dana", "mallory", "/kptbot approve"))
	if notes := w.botNotes(n); !strings.Contains(strings.Join(notes, "\n"), "@mallory 🚫 `approve` needs write permission") {
		t.Errorf("no refusal for mallory (Reporter) among the bot's notes %q", notes)
	}
	w.deliver("Merge Request Hook", w.key(), glHookSecret, w.approvalPayload(n, head, "dana", "dana"))
	if mr := w.gl.MergeRequest(w.repo, n); mr.State != "opened" || w.gl.Merges(w.repo) != 0 {
		t.Fatalf("merged on a Reporter's command or the author's own approval: state %s, merges %d", mr.State, w.gl.Merges(w.repo))
	}

	// Scenario 3: alice's approval hook delivered three times.
	approval, key := w.approvalPayload(n, head, "dana", "alice"), w.key()
	var statuses []int
	for range 3 {
		statuses = append(statuses, w.deliver("Merge Request Hook", key, glHookSecret, approval))
	}
	if statuses[0] != http.StatusAccepted || statuses[1] != http.StatusOK || statuses[2] != http.StatusOK {
		t.Errorf("redeliveries answered %v, want 202 then 200 (duplicate) twice", statuses)
	}
	mr = w.gl.MergeRequest(w.repo, n)
	if mr.State != "merged" || w.gl.Merges(w.repo) != 1 {
		t.Fatalf("after alice's approval: state %s, merges %d; want merged once", mr.State, w.gl.Merges(w.repo))
	}
	w.mu.Lock()
	pinned := append([]string(nil), w.mergeSHAs...)
	w.mu.Unlock()
	if len(pinned) != 1 || pinned[0] != head {
		t.Errorf("merge calls carried sha %v, want exactly the approved head %s", pinned, head)
	}

	// GitLab's own "merge" hook follows; it must not publish again.
	merged := w.payload("derived/merge_request_merge.json", merge(w.user("alice"), w.mrFields("object_attributes", n, head, "dana"),
		map[string]any{"object_attributes.action": "merge", "object_attributes.merge_commit_sha": mr.MergeCommitSHA}))
	if st := w.deliver("Merge Request Hook", w.key(), glHookSecret, merged); st != http.StatusAccepted {
		t.Fatalf("merge hook: HTTP %d", st)
	}
	status := 0
	for _, note := range w.botNotes(n) {
		if strings.HasPrefix(note, "**kptbot** status") {
			status++
		}
	}
	if status != 1 {
		t.Errorf("%d status notes, want one, edited in place (the bot must recognise its own GitLab user)", status)
	}
	tags := w.tags()
	if len(tags) != 1 || tags[0].Name != "pkgs/ns/v1" || tags[0].SHA != mr.MergeCommitSHA {
		t.Fatalf("tags = %v, want only pkgs/ns/v1 at merge commit %s", tags, mr.MergeCommitSHA)
	}
	repo := w.gl.Repository(w.repo)
	ref, err := repo.Reference(plumbing.NewTagReferenceName("pkgs/ns/v1"), false)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := repo.TagObject(ref.Hash())
	if err != nil {
		t.Fatalf("pkgs/ns/v1 is not an annotated tag: %v", err)
	}
	if !strings.Contains(tag.Message, "Approved-by: alice\n") || !strings.Contains(tag.Message, head) {
		t.Errorf("tag message %q: want the approved head and Approved-by: alice (dana's own approval not counted)", tag.Message)
	}
	if _, err := repo.Reference(plumbing.NewBranchReferenceName("scale"), false); err == nil {
		t.Error("the source branch survived publishing")
	}
}

// TestGitLabTwoReplicas is scenario 6 on GitLab: two bot replicas behind
// a load balancer both receive the approval hook (GitLab retried it to
// the other one) at the same moment; the merge request is merged once,
// with the approved SHA pinned, and tagged once.
func TestGitLabTwoReplicas(t *testing.T) {
	t.Parallel()
	w := newGLWorldReplicas(t, 2)
	n, head := w.openHumanDraft("dana")
	if st := w.deliver("Note Hook", w.key(), glHookSecret, w.notePayload(n, head, "dana", "dana", "/kptbot propose")); st != http.StatusAccepted {
		t.Fatalf("propose: HTTP %d", st)
	}
	approval, key := w.approvalPayload(n, head, "dana", "alice"), w.key()
	var wg sync.WaitGroup
	for i := range w.replicas {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if st := w.deliverTo(i, "Merge Request Hook", key, glHookSecret, approval); st != http.StatusAccepted {
				t.Errorf("replica %d answered HTTP %d, want 202 (each replica dedups only its own deliveries)", i, st)
			}
		}(i)
	}
	wg.Wait()
	mr := w.gl.MergeRequest(w.repo, n)
	if mr.State != "merged" || w.gl.Merges(w.repo) != 1 {
		t.Fatalf("state %s, merges %d; want merged exactly once", mr.State, w.gl.Merges(w.repo))
	}
	w.mu.Lock()
	for _, sha := range w.mergeSHAs {
		if sha != head {
			t.Errorf("a merge call pinned %s, want the approved head %s", sha, head)
		}
	}
	w.mu.Unlock()
	if tags := w.tags(); len(tags) != 1 || tags[0].Name != "pkgs/ns/v1" || tags[0].SHA != mr.MergeCommitSHA {
		t.Errorf("tags = %v, want exactly pkgs/ns/v1 at %s", tags, mr.MergeCommitSHA)
	}
}

// TestGitLabApprovalInvalidationEndToEnd is scenario 2 on GitLab: the
// approved SHA comes from the merge request version current when the
// approval was given; a push that changes the rendered output voids it
// (and the bot says so), and the change publishes only with two approvals
// of the new head.
func TestGitLabApprovalInvalidationEndToEnd(t *testing.T) {
	t.Parallel()
	w := newGLWorld(t)
	ctx := context.Background()
	c := w.client()
	w.gl.AddGroupMember("acme/platform", "carol", gitlabtest.Developer)
	w.gl.SetAccess(w.repo, "carol", gitlabtest.Developer)
	main, err := c.ReadTree(ctx, w.repo, "main", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(approversConfig, "teams: [acme/platform]", "teams: [acme/platform]\n    minimum: 2", 1)
	if _, err := c.PushFiles(ctx, w.repo, "main", main.Commit, main.Commit, map[string][]byte{"kptbot.yaml": []byte(cfg)}, "two approvals"); err != nil {
		t.Fatal(err)
	}
	n, head := w.openHumanDraft("dana")
	w.deliver("Note Hook", w.key(), glHookSecret, w.notePayload(n, head, "dana", "dana", "/kptbot propose"))
	w.deliver("Merge Request Hook", w.key(), glHookSecret, w.approvalPayload(n, head, "dana", "alice"))
	if w.gl.Merges(w.repo) != 0 {
		t.Fatal("merged with one approval of two")
	}
	// dana pushes a real change: GitLab's update hook with oldrev.
	cm := strings.Replace(configMap, `replicas: "1"`, `replicas: "4"`, 1)
	head2, err := c.PushFiles(ctx, w.repo, "scale", head, head, map[string][]byte{"pkgs/ns/cm.yaml": []byte(cm)}, "scale to 4")
	if err != nil {
		t.Fatal(err)
	}
	update := w.payload("derived/merge_request_update_push.json", merge(w.user("dana"), w.mrFields("object_attributes", n, head2, "dana"),
		map[string]any{"object_attributes.action": "update", "object_attributes.oldrev": head}))
	if st := w.deliver("Merge Request Hook", w.key(), glHookSecret, update); st != http.StatusAccepted {
		t.Fatalf("update hook: HTTP %d", st)
	}
	void := 0
	for _, note := range w.botNotes(n) {
		if strings.Contains(note, "@alice") && strings.Contains(note, "no longer counts") {
			void++
		}
	}
	if void != 1 {
		t.Fatalf("notices of alice's void approval = %d, want 1; notes %q", void, w.botNotes(n))
	}
	w.deliver("Merge Request Hook", w.key(), glHookSecret, w.approvalPayload(n, head2, "dana", "carol"))
	if w.gl.Merges(w.repo) != 0 {
		t.Fatal("merged with carol's approval and alice's void one")
	}
	w.gl.Unapprove(w.repo, n, "alice")
	w.deliver("Merge Request Hook", w.key(), glHookSecret, w.approvalPayload(n, head2, "dana", "alice"))
	if w.gl.Merges(w.repo) != 1 {
		t.Fatalf("not merged after alice and carol approved the new head (merges %d)", w.gl.Merges(w.repo))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.mergeSHAs) != 1 || w.mergeSHAs[0] != head2 {
		t.Errorf("merge pinned %v, want the new head %s", w.mergeSHAs, head2)
	}
}

// TestGitLabGuardrailAndCrashRecoveryEndToEnd is scenarios 7 and 5 on
// GitLab: a guardrail failure is a failed commit status and blocks
// publishing; fixed and approved, the merge goes through but tagging
// fails (the bot "dies"); the next resync tags exactly once.
func TestGitLabGuardrailAndCrashRecoveryEndToEnd(t *testing.T) {
	t.Parallel()
	w := newGLWorld(t)
	ctx := context.Background()
	c := w.client()
	main, err := c.ReadTree(ctx, w.repo, "main", "")
	if err != nil {
		t.Fatal(err)
	}
	guard := approversConfig + `  guardrails:
    validators:
      - image: starlark:v0.5.0
        configMap:
          source: |
            for r in ctx.resource_list["items"]:
              if r["kind"] == "ConfigMap" and int(r["data"]["replicas"]) > 10:
                fail("replicas above 10 in " + r["metadata"]["name"])
`
	if _, err := c.PushFiles(ctx, w.repo, "main", main.Commit, main.Commit, map[string][]byte{"kptbot.yaml": []byte(guard)}, "guardrail"); err != nil {
		t.Fatal(err)
	}
	n, head := w.openHumanDraft("dana")
	push := func(replicas string) string {
		t.Helper()
		cm := strings.Replace(configMap, `replicas: "1"`, `replicas: "`+replicas+`"`, 1)
		next, err := c.PushFiles(ctx, w.repo, "scale", head, head, map[string][]byte{"pkgs/ns/cm.yaml": []byte(cm)}, "replicas "+replicas)
		if err != nil {
			t.Fatal(err)
		}
		update := w.payload("derived/merge_request_update_push.json", merge(w.user("dana"), w.mrFields("object_attributes", n, next, "dana"),
			map[string]any{"object_attributes.action": "update", "object_attributes.oldrev": head}))
		w.deliver("Merge Request Hook", w.key(), glHookSecret, update)
		head = next
		return next
	}
	push("30")
	if st, ok := w.gl.Status(w.repo, head, "kptbot/pkgs/ns"); !ok || st.State != "failed" {
		t.Fatalf("guardrail status = %+v, %v; want failed", st, ok)
	}
	w.deliver("Note Hook", w.key(), glHookSecret, w.notePayload(n, head, "dana", "dana", "/kptbot propose"))
	w.deliver("Merge Request Hook", w.key(), glHookSecret, w.approvalPayload(n, head, "dana", "alice"))
	if w.gl.Merges(w.repo) != 0 {
		t.Fatal("a change failing a guardrail was merged")
	}
	push("5")
	// Tag creation fails until the "restart" (the scheduler retries 5xx,
	// so a single failure would be absorbed).
	var down atomic.Bool
	down.Store(true)
	w.gl.Intercept(func(rw http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/repository/tags") && down.Load() {
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(rw, `{"message":"500 Internal Server Error"}`)
			return true
		}
		return false
	})
	w.gl.Unapprove(w.repo, n, "alice")
	w.deliver("Merge Request Hook", w.key(), glHookSecret, w.approvalPayload(n, head, "dana", "alice"))
	if w.gl.Merges(w.repo) != 1 || len(w.tags()) != 0 {
		t.Fatalf("setup: merges %d, tags %v; want merged and untagged (the bot died before tagging)", w.gl.Merges(w.repo), w.tags())
	}
	down.Store(false)
	for i := 0; i < 2; i++ {
		if _, err := w.bot.Reconcile(ctx, w.repo); err != nil {
			t.Fatalf("resync: %v", err)
		}
	}
	mr := w.gl.MergeRequest(w.repo, n)
	if tags := w.tags(); len(tags) != 1 || tags[0].Name != "pkgs/ns/v1" || tags[0].SHA != mr.MergeCommitSHA {
		t.Fatalf("after resync: tags %v, want pkgs/ns/v1 at %s", tags, mr.MergeCommitSHA)
	}
}
