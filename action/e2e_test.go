package action

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/github/githubtest"
	"github.com/kptbot/kptbot/forge/gitlab"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
)

const e2eKptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: ns
pipeline:
  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1
      configMap:
        namespace: team-a
`

const e2eConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: team-a
data:
  replicas: "1"
`

// e2eWorld is a fake GitHub (REST checked against GitHub's OpenAPI
// description, repositories in real git) and a workflow job's environment
// pointing at it.
type e2eWorld struct {
	t    *testing.T
	gh   *githubtest.Server
	repo forge.Repo
	dir  string
	runs int
	// inputs are extra INPUT_ variables of every run.
	inputs map[string]string
}

// newBot is the wiring `kptbot action` uses: a token client for the
// Setup's forge, API and git hosts, and the bot over it. (On GitLab the
// bot's login is the token's user; the fake's is known.)
func newBot(_ context.Context, s Setup) (Bot, error) {
	var f forge.Resolver
	switch s.Forge {
	case forge.GitHub:
		client, err := github.NewTokenClient(s.Token, s.APIURL)
		if err != nil {
			return nil, err
		}
		client.GitURL = s.ServerURL + "/"
		f = forge.Static(client)
	case forge.GitLab:
		client, err := gitlab.NewClient(nil, s.APIURL, s.Token)
		if err != nil {
			return nil, err
		}
		f = forge.Static(client)
	}
	return bot.New(bot.Options{Forges: map[string]forge.Resolver{s.Forge: f}, Name: "kptbot", Login: "kptbot[bot]",
		Logins: map[string]string{forge.GitLab: gitlabtest.BotUsername}, Logger: s.Logger, DryRun: s.DryRun, SingleWrite: s.SingleWrite})
}

// run runs `kptbot action` for one event and returns the step's outputs
// and summary.
func (w *e2eWorld) run(event string, payload []byte, mode string) (map[string]string, string) {
	w.t.Helper()
	w.runs++
	dir := filepath.Join(w.dir, event+"-"+string(rune('0'+w.runs)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		w.t.Fatal(err)
	}
	eventPath := filepath.Join(dir, "event.json")
	if err := os.WriteFile(eventPath, payload, 0o644); err != nil {
		w.t.Fatal(err)
	}
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": w.repo.FullName, "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": eventPath,
		"GITHUB_API_URL": w.gh.URL, "GITHUB_SERVER_URL": strings.TrimSuffix(w.gh.GitURL, "/"), "GITHUB_RUN_ID": "1", "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_OUTPUT": filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md"),
		"GITHUB_TOKEN": "ghs_e2eToken", "INPUT_MODE": mode,
	}
	for k, v := range w.inputs {
		env[k] = v
	}
	var stdout, stderr bytes.Buffer
	if _, err := Run(context.Background(), Options{Getenv: lookup(env), Stdout: &stdout, Stderr: &stderr, NewBot: newBot}); err != nil {
		w.t.Fatalf("kptbot action on %s: %v\nstdout:\n%s\nlog:\n%s", event, err, stdout.String(), stderr.String())
	}
	out, err := os.ReadFile(env["GITHUB_OUTPUT"])
	if err != nil {
		w.t.Fatal(err)
	}
	summary, err := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
	if err != nil {
		w.t.Fatal(err)
	}
	return parseOutputs(w.t, string(out)), string(summary)
}

// payload loads a real GitHub payload and sets fields (dotted paths) so
// that it describes this world.
func (w *e2eWorld) payload(file string, set map[string]any) []byte {
	w.t.Helper()
	base := map[string]any{
		"repository.full_name": w.repo.FullName, "repository.name": "site-a", "repository.owner.login": "acme",
		"repository.clone_url": w.repo.CloneURL, "repository.default_branch": "main",
	}
	if strings.HasPrefix(file, "pull_request") || strings.Contains(file, "pull_request_review") {
		base["pull_request.head.repo.full_name"] = w.repo.FullName
		base["pull_request.base.repo.full_name"] = w.repo.FullName
	}
	return editPayload(w.t, payloads+"/github/"+file, base, set)
}

// editPayload loads a real payload and sets fields on it (dotted paths;
// later maps win).
func editPayload(t *testing.T, file string, sets ...map[string]any) []byte {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, set := range sets {
		for k, v := range set {
			cur := m
			parts := strings.Split(k, ".")
			for _, p := range parts[:len(parts)-1] {
				next, ok := cur[p].(map[string]any)
				if !ok {
					next = map[string]any{}
					cur[p] = next
				}
				cur = next
			}
			cur[parts[len(parts)-1]] = v
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestActionEndToEnd drives a package's lifecycle through `kptbot action`
// runs, as three workflow runs would: a human opens a draft pull request
// (the run reports a check), a writer comments /kptbot propose (the run
// marks it ready), an approver approves (the run merges, tags pkgs/ns/v1
// and sets the published output) — with the real bot, the GitHub adapter
// and real git behind a fake GitHub.
func TestActionEndToEnd(t *testing.T) {
	t.Parallel()
	w := &e2eWorld{t: t, gh: githubtest.New(t), dir: t.TempDir()}
	w.repo = forge.Repo{Forge: forge.GitHub, FullName: "acme/site-a", DefaultBranch: "main", CloneURL: w.gh.GitURL + "acme/site-a.git"}
	w.gh.Seed(w.repo, "main", map[string][]byte{"pkgs/ns/Kptfile": []byte(e2eKptfile), "pkgs/ns/cm.yaml": []byte(e2eConfigMap)})
	for _, u := range []string{"alice", "bob", "dana"} {
		w.gh.SetPermission(w.repo, u, "write")
	}

	// dana pushes a branch and opens a draft pull request.
	human, err := github.NewClient(nil, w.gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	human.GitURL = w.gh.GitURL
	ctx := context.Background()
	cm := strings.Replace(e2eConfigMap, `replicas: "1"`, `replicas: "3"`, 1)
	head, err := human.PushFiles(ctx, w.repo, "scale", "", "main", map[string][]byte{"pkgs/ns/cm.yaml": []byte(cm)}, "scale to 3")
	if err != nil {
		t.Fatal(err)
	}
	c, err := human.OpenChange(ctx, w.repo, forge.ChangeSpec{Head: "scale", Base: "main", Title: "scale ns", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	n := c.Number
	w.gh.SetAuthor(w.repo, n, "dana")
	outputs, summary := w.run("pull_request", w.payload("pull_request/opened.payload.json", map[string]any{
		"number": n, "pull_request.number": n, "pull_request.draft": true, "pull_request.user.login": "dana",
		"pull_request.head.ref": "scale", "pull_request.head.sha": head, "pull_request.base.ref": "main", "sender.login": "dana",
	}), ModeEvent)
	if ch, ok := w.gh.Check(w.repo, head, "kptbot/pkgs/ns"); !ok || ch.Conclusion != "success" {
		t.Fatalf("check run on the draft = %+v, %v\nsummary:\n%s", ch, ok, summary)
	}
	var got bot.Outcome
	if err := json.Unmarshal([]byte(outputs[OutputChanges]), &got); err != nil || len(got.Checks) == 0 {
		t.Errorf("changes output %q (%v): want the check", outputs[OutputChanges], err)
	}
	if !strings.Contains(summary, "### `pkgs/ns`") || !strings.Contains(summary, "kptbot/pkgs/ns") {
		t.Errorf("summary has no table for pkgs/ns:\n%s", summary)
	}

	// bob proposes it.
	id := w.gh.AddComment(w.repo, n, "bob", "/kptbot propose")
	w.run("issue_comment", w.payload("derived/issue_comment.created.on-pull-request.payload.json", map[string]any{
		"issue.number": n, "comment.id": id, "comment.body": "/kptbot propose", "comment.user.login": "bob", "comment.user.type": "User", "sender.login": "bob",
	}), ModeEvent)
	if ch, err := human.GetChange(ctx, w.repo, n); err != nil || ch.Draft {
		t.Fatalf("after /kptbot propose: %+v, %v", ch, err)
	}

	// alice approves: the run publishes, then reconciles.
	w.gh.Review(w.repo, n, forge.Review{State: forge.ReviewApproved, Reviewer: forge.User{Login: "alice"}, CommitSHA: head})
	outputs, summary = w.run("pull_request_review", w.payload("derived/pull_request_review.submitted.approved.payload.json", map[string]any{
		"pull_request.number": n, "review.commit_id": head, "review.user.login": "alice", "review.state": "approved", "sender.login": "alice",
	}), ModeDefault)
	ch, err := human.GetChange(ctx, w.repo, n)
	if err != nil || !ch.Merged {
		t.Fatalf("after alice's approval: %+v, %v\nsummary:\n%s", ch, err, summary)
	}
	tags, err := human.ListTags(ctx, w.repo)
	if err != nil || len(tags) != 1 || tags[0].Name != "pkgs/ns/v1" || tags[0].SHA != ch.MergeCommitSHA {
		t.Fatalf("tags %v (%v), want pkgs/ns/v1 at %s", tags, err, ch.MergeCommitSHA)
	}
	if outputs[OutputPublished] != "pkgs/ns/v1" {
		t.Errorf("published output %q, want pkgs/ns/v1", outputs[OutputPublished])
	}
	if !strings.Contains(summary, "| Published | `pkgs/ns/v1` |") || !strings.Contains(summary, "| Merged | ") {
		t.Errorf("summary does not show the merge and the tag:\n%s", summary)
	}
}
