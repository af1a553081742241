package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/github/githubtest"
)

const hookSecret = "e2e-webhook-secret"

// ghWorld is one fake GitHub with a kptbot server (or several replicas)
// in front of it, fed signed deliveries over HTTP.
type ghWorld struct {
	t     *testing.T
	gh    *githubtest.Server
	repo  forge.Repo
	nodes []*ghNode
	seq   atomic.Int64
}

// ghNode is one bot replica: its own adapter, Bot and Server.
type ghNode struct {
	srv    *httptest.Server
	done   chan struct{}
	bot    *bot.Bot
	server *Server
}

// doneHandler tells the test when a queued event has been handled.
type doneHandler struct {
	Handler
	done chan struct{}
}

func (h doneHandler) Handle(ctx context.Context, ev forge.Event) (bot.Outcome, error) {
	defer func() { h.done <- struct{}{} }()
	return h.Handler.Handle(ctx, ev)
}

func newGHWorld(t *testing.T, replicas int) *ghWorld {
	t.Helper()
	w := &ghWorld{t: t, gh: githubtest.New(t)}
	w.repo = forge.Repo{Forge: forge.GitHub, FullName: "acme/site-a", DefaultBranch: "main", CloneURL: w.gh.GitURL + "acme/site-a.git"}
	w.gh.Seed(w.repo, "main", map[string][]byte{"pkgs/ns/Kptfile": []byte(kptfile), "pkgs/ns/cm.yaml": []byte(configMap)})
	for _, u := range []string{"alice", "bob", "dana"} {
		w.gh.SetPermission(w.repo, u, "write")
	}
	w.gh.SetPermission(w.repo, "mallory", "read")
	for i := 0; i < replicas; i++ {
		client, err := github.NewClient(nil, w.gh.URL)
		if err != nil {
			t.Fatal(err)
		}
		client.GitURL = w.gh.GitURL
		b, err := newBot(bot.Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(client)}, Name: "kptbot", Login: "kptbot[bot]"})
		if err != nil {
			t.Fatal(err)
		}
		w.addNode(b)
	}
	return w
}

// addNode starts a webhook server in front of b.
func (w *ghWorld) addNode(b *bot.Bot) {
	t := w.t
	{
		done := make(chan struct{}, 100)
		s := New(Options{Handler: doneHandler{Handler: b, done: done}, Workers: 2, QueueSize: 10,
			Parsers: map[string]WebhookParser{forge.GitHub: func(r *http.Request) (forge.Event, error) {
				return github.ParseWebhook(r, []byte(hookSecret), 25<<20)
			}}})
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() { s.Run(ctx); close(stopped) }()
		hs := httptest.NewServer(s.Router())
		t.Cleanup(func() { hs.Close(); cancel(); <-stopped })
		w.nodes = append(w.nodes, &ghNode{srv: hs, done: done, bot: b, server: s})
	}
}

// payload loads a real GitHub webhook payload and sets fields on it
// (dotted paths) so it describes this world.
func (w *ghWorld) payload(file string, set map[string]any) []byte {
	w.t.Helper()
	raw, err := os.ReadFile("../testdata/webhooks/github/" + file)
	if err != nil {
		w.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		w.t.Fatal(err)
	}
	base := map[string]any{
		"repository.full_name": w.repo.FullName, "repository.name": "site-a", "repository.owner.login": "acme",
		"repository.clone_url": w.repo.CloneURL, "repository.default_branch": "main",
	}
	for k, v := range set {
		base[k] = v
	}
	if _, ok := base["repository.id"]; !ok {
		// GitHub's payloads carry the repository's id, which the follower
		// index ties upstream names to.
		name, _ := base["repository.full_name"].(string)
		base["repository.id"] = w.gh.RepoID(forge.Repo{FullName: name})
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

func setPath(m map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// deliver POSTs a signed delivery to replica i and waits until it has been
// handled when it was queued; it returns the HTTP status.
func (w *ghWorld) deliver(i int, event, id string, body []byte) int {
	w.t.Helper()
	mac := hmac.New(sha256.New, []byte(hookSecret))
	mac.Write(body)
	req, _ := http.NewRequest("POST", w.nodes[i].srv.URL+"/webhooks/github", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusAccepted {
		select {
		case <-w.nodes[i].done:
		case <-time.After(60 * time.Second):
			w.t.Fatalf("delivery %s (%s) was not handled", id, event)
		}
		// and what it queued (a fan-out's jobs) has run
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := w.nodes[i].server.WaitIdle(ctx); err != nil {
			w.t.Fatalf("delivery %s (%s): the work it queued did not finish: %v", id, event, err)
		}
	}
	return resp.StatusCode
}

func (w *ghWorld) id() string { return fmt.Sprintf("delivery-%d", w.seq.Add(1)) }

// openHumanDraft pushes a branch as a human would and announces the draft.
func (w *ghWorld) openHumanDraft(author string) (number int, head string) {
	w.t.Helper()
	client, _ := github.NewClient(nil, w.gh.URL)
	client.GitURL = w.gh.GitURL
	ctx := context.Background()
	cm := strings.Replace(configMap, `replicas: "1"`, `replicas: "3"`, 1)
	head, err := client.PushFiles(ctx, w.repo, "scale", "", "main", map[string][]byte{"pkgs/ns/cm.yaml": []byte(cm)}, "scale to 3")
	if err != nil {
		w.t.Fatal(err)
	}
	c, err := client.OpenChange(ctx, w.repo, forge.ChangeSpec{Head: "scale", Base: "main", Title: "scale ns", Draft: true})
	if err != nil {
		w.t.Fatal(err)
	}
	w.gh.SetAuthor(w.repo, c.Number, author)
	if st := w.deliver(0, "pull_request", w.id(), w.payload("pull_request/opened.payload.json", map[string]any{
		"number": c.Number, "pull_request.number": c.Number, "pull_request.draft": true, "pull_request.user.login": author,
		"pull_request.head.ref": "scale", "pull_request.head.sha": head, "pull_request.base.ref": "main",
		"pull_request.head.repo.full_name": w.repo.FullName, "pull_request.base.repo.full_name": w.repo.FullName, "sender.login": author,
	})); st != http.StatusAccepted {
		w.t.Fatalf("opened delivery: HTTP %d", st)
	}
	return c.Number, head
}

func (w *ghWorld) commentPayload(number int, who, body string) []byte {
	id := w.gh.AddComment(w.repo, number, who, body)
	return w.payload("derived/issue_comment.created.on-pull-request.payload.json", map[string]any{
		"issue.number": number, "comment.id": id, "comment.body": body, "comment.user.login": who, "comment.user.type": "User", "sender.login": who,
	})
}

func (w *ghWorld) reviewPayload(number int, who, sha string) []byte {
	w.gh.Review(w.repo, number, forge.Review{State: forge.ReviewApproved, Reviewer: forge.User{Login: who}, CommitSHA: sha})
	return w.payload("derived/pull_request_review.submitted.approved.payload.json", map[string]any{
		"pull_request.number": number, "review.commit_id": sha, "review.user.login": who, "review.state": "approved", "sender.login": who,
		"pull_request.head.repo.full_name": w.repo.FullName, "pull_request.base.repo.full_name": w.repo.FullName,
	})
}

func (w *ghWorld) tags() []forge.Tag {
	client, _ := github.NewClient(nil, w.gh.URL)
	tags, err := client.ListTags(context.Background(), w.repo)
	if err != nil {
		w.t.Fatal(err)
	}
	return tags
}

func (w *ghWorld) change(n int) forge.Change {
	client, _ := github.NewClient(nil, w.gh.URL)
	c, err := client.GetChange(context.Background(), w.repo, n)
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// TestGitHubLifecycleEndToEnd: a human's draft PR, proposed by command,
// refused for an unauthorized command and a self-approval, approved by a
// reviewer, merged with the approved SHA and tagged — through signed
// deliveries, the webhook server, the GitHub adapter and real git.
func TestGitHubLifecycleEndToEnd(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	n, head := w.openHumanDraft("dana")
	if c, ok := w.gh.Check(w.repo, head, "kptbot/pkgs/ns"); !ok || c.Conclusion != "success" || !strings.Contains(c.Summary, "ConfigMap team-a/settings") {
		t.Fatalf("check run on the draft = %+v, %v", c, ok)
	}
	// Unsigned and tampered deliveries are rejected.
	body := w.commentPayload(n, "dana", "/kptbot propose")
	req, _ := http.NewRequest("POST", w.nodes[0].srv.URL+"/webhooks/github", bytes.NewReader(body))
	req.Header.Set("X-GitHub-Event", "issue_comment")
	req.Header.Set("X-GitHub-Delivery", "unsigned")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unsigned delivery: %v %v, want 401", resp.StatusCode, err)
	}
	if st := w.deliver(0, "issue_comment", w.id(), body); st != http.StatusAccepted {
		t.Fatalf("propose: HTTP %d", st)
	}
	if c := w.change(n); c.Draft {
		t.Fatal("/kptbot propose did not mark the PR ready")
	}
	w.deliver(0, "issue_comment", w.id(), w.commentPayload(n, "mallory", "/kptbot approve"))
	w.deliver(0, "pull_request_review", w.id(), w.reviewPayload(n, "dana", head))
	if c := w.change(n); c.Merged {
		t.Fatal("merged on a read-only user's command or the author's own review")
	}
	// The same approval delivered three times: one merge, one tag.
	approval := w.reviewPayload(n, "alice", head)
	id := w.id()
	statuses := []int{w.deliver(0, "pull_request_review", id, approval), w.deliver(0, "pull_request_review", id, approval), w.deliver(0, "pull_request_review", id, approval)}
	if statuses[0] != http.StatusAccepted || statuses[1] != http.StatusOK || statuses[2] != http.StatusOK {
		t.Errorf("redeliveries answered %v, want 202 then 200 (duplicate) twice", statuses)
	}
	c := w.change(n)
	if !c.Merged || w.gh.Merges(w.repo) != 1 {
		t.Fatalf("after alice's approval: merged=%v merges=%d", c.Merged, w.gh.Merges(w.repo))
	}
	tags := w.tags()
	if len(tags) != 1 || tags[0].Name != "pkgs/ns/v1" || tags[0].SHA != c.MergeCommitSHA {
		t.Fatalf("tags = %v, want pkgs/ns/v1 at merge commit %s", tags, c.MergeCommitSHA)
	}
}

// TestGitHubTwoReplicas: two bot instances get the same approval at the
// same time; compare-and-swap writes make one merge and one tag.
func TestGitHubTwoReplicas(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 2)
	n, head := w.openHumanDraft("dana")
	w.deliver(0, "issue_comment", w.id(), w.commentPayload(n, "bob", "/kptbot propose"))
	approval := w.reviewPayload(n, "alice", head)
	var wg sync.WaitGroup
	for i := range w.nodes {
		wg.Add(1)
		go func(i int) { defer wg.Done(); w.deliver(i, "pull_request_review", "same-delivery", approval) }(i)
	}
	wg.Wait()
	if m := w.gh.Merges(w.repo); m != 1 {
		t.Errorf("merges = %d, want 1", m)
	}
	if tags := w.tags(); len(tags) != 1 || tags[0].Name != "pkgs/ns/v1" {
		t.Errorf("tags = %v, want exactly pkgs/ns/v1", tags)
	}
}

// client is an unscheduled adapter for the test's own reads and pushes.
func (w *ghWorld) client() *github.Client {
	c, err := github.NewClient(nil, w.gh.URL)
	if err != nil {
		w.t.Fatal(err)
	}
	c.GitURL = w.gh.GitURL
	return c
}

// push commits files on branch as a person would and announces it.
func (w *ghWorld) push(who, branch string, n int, base string, files map[string][]byte) string {
	w.t.Helper()
	c := w.change(n)
	sha, err := w.client().PushFiles(context.Background(), w.repo, branch, c.HeadSHA, base, files, "push by "+who)
	if err != nil {
		w.t.Fatal(err)
	}
	w.deliver(0, "pull_request", w.id(), w.payload("pull_request/synchronize.payload.json", map[string]any{
		"number": n, "pull_request.number": n, "pull_request.head.ref": branch, "pull_request.head.sha": sha, "pull_request.base.ref": "main",
		"pull_request.head.repo.full_name": w.repo.FullName, "pull_request.base.repo.full_name": w.repo.FullName, "sender.login": who,
	}))
	return sha
}

func (w *ghWorld) mainSHA() string {
	bs, err := w.client().ListBranches(context.Background(), w.repo)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, b := range bs {
		if b.Name == "main" {
			return b.SHA
		}
	}
	w.t.Fatal("no main")
	return ""
}

func (w *ghWorld) setConfig(cfg string) {
	w.t.Helper()
	main := w.mainSHA()
	if _, err := w.client().PushFiles(context.Background(), w.repo, "main", main, main, map[string][]byte{"kptbot.yaml": []byte(cfg)}, "config"); err != nil {
		w.t.Fatal(err)
	}
}

func replicas(n string) map[string][]byte {
	return map[string][]byte{"pkgs/ns/cm.yaml": []byte(strings.Replace(configMap, `replicas: "1"`, `replicas: "`+n+`"`, 1))}
}

// TestGitHubApprovalInvalidationEndToEnd is scenario 2 on GitHub: a push
// that changes the rendered output voids an approval (and the bot says
// so); a rebase that leaves it identical keeps it.
func TestGitHubApprovalInvalidationEndToEnd(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	w.setConfig("apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: site-a\nspec:\n  approvals:\n    minimum: 2\n")
	n, head := w.openHumanDraft("dana")
	w.deliver(0, "issue_comment", w.id(), w.commentPayload(n, "dana", "/kptbot propose"))
	w.deliver(0, "pull_request_review", w.id(), w.reviewPayload(n, "alice", head))
	// main moves; dana rebases with the same content: alice still counts.
	main := w.mainSHA()
	if _, err := w.client().PushFiles(context.Background(), w.repo, "main", main, main, map[string][]byte{"README.md": []byte("moved\n")}, "main moves"); err != nil {
		t.Fatal(err)
	}
	rebased := w.push("dana", "scale", n, "main", replicas("3"))
	for _, cm := range w.comments(n) {
		if strings.Contains(cm, "no longer counts") {
			t.Fatalf("a rebase with an identical render voided the approval: %s", cm)
		}
	}
	// dana changes the content: alice's approval is void, and said so.
	w.push("dana", "scale", n, rebased, replicas("4"))
	said := 0
	for _, cm := range w.comments(n) {
		if strings.Contains(cm, "@alice") && strings.Contains(cm, "no longer counts") {
			said++
		}
	}
	if said != 1 {
		t.Fatalf("notices of alice's void approval = %d, want 1; comments %v", said, w.comments(n))
	}
	head = w.change(n).HeadSHA
	w.deliver(0, "pull_request_review", w.id(), w.reviewPayload(n, "bob", head))
	if w.change(n).Merged {
		t.Fatal("merged with one valid approval of two")
	}
	w.deliver(0, "pull_request_review", w.id(), w.reviewPayload(n, "alice", head))
	if c := w.change(n); !c.Merged {
		t.Fatal("not merged after alice and bob approved the new head")
	}
}

func (w *ghWorld) comments(n int) []string {
	cs, err := w.client().ListComments(context.Background(), w.repo, n)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		out = append(out, c.Body)
	}
	return out
}

// TestGitHubGuardrailAndCrashRecoveryEndToEnd is scenarios 7 and 5 on
// GitHub: a guardrail failure is a failed check with an annotation and
// blocks publishing; fixed and approved, the merge succeeds but tagging
// fails (the bot "dies"); the next resync tags exactly once.
func TestGitHubGuardrailAndCrashRecoveryEndToEnd(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	w.setConfig(`apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata:
  name: site-a
spec:
  guardrails:
    validators:
      - image: starlark:v0.5.0
        configMap:
          source: |
            for r in ctx.resource_list["items"]:
              if r["kind"] == "ConfigMap" and int(r["data"]["replicas"]) > 10:
                fail("replicas above 10 in " + r["metadata"]["name"])
`)
	n, _ := w.openHumanDraft("dana")
	head := w.push("dana", "scale", n, "main", replicas("30"))
	check, ok := w.gh.Check(w.repo, head, "kptbot/pkgs/ns")
	if !ok || check.Conclusion != "failure" || !strings.Contains(check.Summary, "replicas above 10") || len(check.Annotations) == 0 {
		t.Fatalf("guardrail check = %+v, %v; want a failure with an annotation", check, ok)
	}
	w.deliver(0, "issue_comment", w.id(), w.commentPayload(n, "dana", "/kptbot propose"))
	w.deliver(0, "pull_request_review", w.id(), w.reviewPayload(n, "alice", head))
	if w.change(n).Merged {
		t.Fatal("a change failing a guardrail was published")
	}
	head = w.push("dana", "scale", n, head, replicas("5"))
	var tagFails atomic.Int32
	w.gh.Intercept(func(rw http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git/refs") && tagFails.Add(1) == 1 {
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(rw, `{"message":"Server Error"}`)
			return true
		}
		return false
	})
	w.deliver(0, "pull_request_review", w.id(), w.reviewPayload(n, "alice", head))
	c := w.change(n)
	if !c.Merged || len(w.tags()) != 0 {
		t.Fatalf("setup: merged=%v tags=%v; want merged and untagged (the bot died before tagging)", c.Merged, w.tags())
	}
	for i := 0; i < 2; i++ {
		if _, err := w.nodes[0].bot.Reconcile(context.Background(), w.repo); err != nil {
			t.Fatalf("resync: %v", err)
		}
	}
	if tags := w.tags(); len(tags) != 1 || tags[0].Name != "pkgs/ns/v1" || tags[0].SHA != c.MergeCommitSHA {
		t.Fatalf("after resync: tags %v, want pkgs/ns/v1 at %s", tags, c.MergeCommitSHA)
	}
}
