package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
)

// tokenTrap is an attacker's git server: it records the Authorization
// headers it is sent and answers as a server wanting credentials.
type tokenTrap struct {
	URL   string
	mu    sync.Mutex
	hits  int
	auths []string
}

func newTokenTrap(t *testing.T) *tokenTrap {
	tr := &tokenTrap{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.mu.Lock()
		tr.hits++
		if a := r.Header.Get("Authorization"); a != "" {
			tr.auths = append(tr.auths, a)
		}
		tr.mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	tr.URL = srv.URL
	return tr
}

func (tr *tokenTrap) seen() (int, []string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.hits, append([]string(nil), tr.auths...)
}

// TestAttackGitLabPayloadCloneURL: one webhook token vouches for every
// project, so a signed merge request hook (and a note hook) names an
// attacker's server as the project's git_http_url. The bot's token never
// reaches it: the remote comes from the API, and the bot renders the real
// project all the same.
func TestAttackGitLabPayloadCloneURL(t *testing.T) {
	t.Parallel()
	w := newGLWorld(t)
	trap := newTokenTrap(t)
	evil := map[string]any{
		"project.git_http_url": trap.URL + "/acme/sites/edge-1.git", "project.http_url": trap.URL + "/acme/sites/edge-1.git",
		"project.url": trap.URL + "/acme/sites/edge-1.git", "repository.git_http_url": trap.URL + "/acme/sites/edge-1.git",
		"repository.url": trap.URL + "/acme/sites/edge-1.git",
	}
	ctx := context.Background()
	c := w.client()
	cm := strings.Replace(configMap, `replicas: "1"`, `replicas: "3"`, 1)
	head, err := c.PushFiles(ctx, w.repo, "scale", "", "main", map[string][]byte{"pkgs/ns/cm.yaml": []byte(cm)}, "scale to 3")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.OpenChange(ctx, w.repo, forge.ChangeSpec{Head: "scale", Base: "main", Title: "scale ns", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	w.gl.SetAuthor(w.repo, ch.Number, "dana")
	open := w.payload("merge_request.json", merge(w.user("dana"), w.mrFields("object_attributes", ch.Number, head, "dana"),
		map[string]any{"object_attributes.action": "open", "object_attributes.system": false}, evil))
	if st := w.deliver("Merge Request Hook", w.key(), glHookSecret, open); st != http.StatusAccepted {
		t.Fatalf("open delivery: HTTP %d", st)
	}
	id := w.gl.AddNote(w.repo, ch.Number, "dana", "/kptbot propose")
	propose := w.payload("note_merge_request.json", merge(w.user("dana"), w.mrFields("merge_request", ch.Number, head, "dana"), map[string]any{
		"project_id": w.repo.ID, "object_attributes.id": id, "object_attributes.note": "/kptbot propose", "object_attributes.description": "/kptbot propose",
		"object_attributes.author_id": w.gl.UserID("dana"), "object_attributes.noteable_id": ch.Number + 5000, "object_attributes.project_id": w.repo.ID,
		"object_attributes.action": "create", "object_attributes.system": false,
	}, evil))
	if st := w.deliver("Note Hook", w.key(), glHookSecret, propose); st != http.StatusAccepted {
		t.Fatalf("note delivery: HTTP %d", st)
	}
	if _, auths := trap.seen(); len(auths) > 0 {
		t.Fatalf("the bot's token reached the server a payload named: Authorization %q", auths)
	}
	if st, ok := w.gl.Status(w.repo, head, "kptbot/pkgs/ns"); !ok || st.State != "success" {
		t.Errorf("commit status = %+v, %v: the bot should have rendered the real project", st, ok)
	}
	if mr := w.gl.MergeRequest(w.repo, ch.Number); mr.Title != "scale ns" {
		t.Errorf("the propose note was not acted on (title %q): the legitimate flow broke", mr.Title)
	}
}

// TestAttackGitHubPayloadCloneURL: a signed pull_request delivery whose
// repository.clone_url (and head/base repo clone URLs) name an attacker's
// server. The installation token goes only to the configured git host.
func TestAttackGitHubPayloadCloneURL(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 0)
	trap := newTokenTrap(t)
	client, err := github.NewClient(nil, w.gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	client.GitURL = w.gh.GitURL
	client.GitAuth = func(context.Context) (transport.AuthMethod, error) {
		return &githttp.BasicAuth{Username: "x-access-token", Password: "ghs_installation_token"}, nil
	}
	b, err := newBot(bot.Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(client)}, Name: "kptbot", Login: "kptbot[bot]"})
	if err != nil {
		t.Fatal(err)
	}
	w.addNode(b)
	human, _ := github.NewClient(nil, w.gh.URL)
	human.GitURL = w.gh.GitURL
	ctx := context.Background()
	cm := strings.Replace(configMap, `replicas: "1"`, `replicas: "3"`, 1)
	head, err := human.PushFiles(ctx, w.repo, "scale", "", "main", map[string][]byte{"pkgs/ns/cm.yaml": []byte(cm)}, "scale to 3")
	if err != nil {
		t.Fatal(err)
	}
	c, err := human.OpenChange(ctx, w.repo, forge.ChangeSpec{Head: "scale", Base: "main", Title: "scale ns", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	w.gh.SetAuthor(w.repo, c.Number, "dana")
	for _, evil := range []string{trap.URL + "/acme/site-a.git", "https://attacker.invalid/acme/site-a.git"} {
		body := w.payload("pull_request/opened.payload.json", map[string]any{
			"number": c.Number, "pull_request.number": c.Number, "pull_request.draft": true, "pull_request.user.login": "dana",
			"pull_request.head.ref": "scale", "pull_request.head.sha": head, "pull_request.base.ref": "main",
			"pull_request.head.repo.full_name": w.repo.FullName, "pull_request.base.repo.full_name": w.repo.FullName, "sender.login": "dana",
			"repository.clone_url": evil, "pull_request.head.repo.clone_url": evil, "pull_request.base.repo.clone_url": evil,
		})
		if st := w.deliver(0, "pull_request", w.id(), body); st != http.StatusAccepted {
			t.Fatalf("opened delivery: HTTP %d", st)
		}
		if ch, ok := w.gh.Check(w.repo, head, "kptbot/pkgs/ns"); !ok || ch.Conclusion != "success" {
			t.Errorf("clone_url %s: check run = %+v, %v: the bot should have rendered the real repository", evil, ch, ok)
		}
	}
	if _, auths := trap.seen(); len(auths) > 0 {
		t.Fatalf("the installation token reached the server a payload named: Authorization %q", auths)
	}
}

// TestAttackGitLabForgedNote: a signed note hook is trusted for nothing
// but "note N on merge request M changed": its author and text are read
// back by id. A delivery naming alice (an approver) as the author of
// mallory's note, of a note alice wrote with other text, or of no note
// at all approves nothing; alice's real command still does.
func TestAttackGitLabForgedNote(t *testing.T) {
	t.Parallel()
	w := newGLWorld(t)
	n, head := w.openHumanDraft("dana")
	w.deliver("Note Hook", w.key(), glHookSecret, w.notePayload(n, head, "dana", "dana", "/kptbot propose"))
	if mr := w.gl.MergeRequest(w.repo, n); mr.Title != "scale ns" {
		t.Fatalf("propose did not work: title %q", mr.Title)
	}
	forged := func(noteID int64, claimed, text string) []byte {
		return w.payload("note_merge_request.json", merge(w.user(claimed), w.mrFields("merge_request", n, head, "dana"), map[string]any{
			"project_id": w.repo.ID, "object_attributes.id": noteID, "object_attributes.note": text, "object_attributes.description": text,
			"object_attributes.author_id": w.gl.UserID(claimed), "object_attributes.noteable_id": n + 5000, "object_attributes.project_id": w.repo.ID,
			"object_attributes.action": "create", "object_attributes.system": false,
		}))
	}
	attacks := map[string][]byte{
		"mallory's note as alice's":  forged(w.gl.AddNote(w.repo, n, "mallory", "/kptbot approve"), "alice", "/kptbot approve"),
		"alice's note with new text": forged(w.gl.AddNote(w.repo, n, "alice", "looks good, will approve later"), "alice", "/kptbot approve"),
		"a note that does not exist": forged(987654, "alice", "/kptbot approve"),
		"the bot's note as alice's":  forged(w.gl.AddNote(w.repo, n, gitlabtest.BotUsername, "/kptbot approve"), "alice", "/kptbot approve"),
	}
	for name, body := range attacks {
		if st := w.deliver("Note Hook", w.key(), glHookSecret, body); st != http.StatusAccepted {
			t.Fatalf("%s: HTTP %d", name, st)
		}
		if mr := w.gl.MergeRequest(w.repo, n); mr.State != "opened" || w.gl.Merges(w.repo) != 0 {
			t.Fatalf("%s: the forged approval merged the change (state %s, merges %d)", name, mr.State, w.gl.Merges(w.repo))
		}
		for _, note := range w.botNotes(n) {
			if strings.Contains(note, "Approved") {
				t.Fatalf("%s: the bot answered the forged command: %q", name, note)
			}
		}
	}
	w.deliver("Note Hook", w.key(), glHookSecret, w.notePayload(n, head, "dana", "alice", "/kptbot approve"))
	if w.gl.Merges(w.repo) != 1 {
		t.Errorf("alice's real /kptbot approve did not merge (merges %d): the legitimate flow broke; bot notes %q", w.gl.Merges(w.repo), w.botNotes(n))
	}
}

// quickActionLine is GitLab's quick action pattern (see the GitLab
// adapter's escaper): "/" in the first column, a command name, then a
// space or the end of the line, after GitLab deletes every "\r". Code
// blocks and quotes are not excepted: which ones GitLab skips depends on
// its version, so none is counted on.
var quickActionLine = regexp.MustCompile(`(?m)^/([A-Za-z0-9_]+)(?: [^\n]*)?[ \t]*$`)

func quickActions(text string) []string {
	return quickActionLine.FindAllString(strings.ReplaceAll(text, "\r", ""), -1)
}

// TestAttackGitLabQuickActionInBotText: an upstream package holds
// resources whose names carry line breaks, so that the description of the
// merge request the bot opens downstream (which lists the rendered
// resources) has "/merge" and "/approve" on lines of their own, behind a
// ~~~ fence, an indented ``` fence or a carriage return. GitLab would run
// them as the bot when the merge request is created; no line the bot
// writes may be one. The downstream follows the upstream through its
// kptbot.yaml; the work starts with a signed push hook.
func TestAttackGitLabQuickActionInBotText(t *testing.T) {
	t.Parallel()
	w := newGLWorld(t)
	ctx := context.Background()
	c := w.client()
	up := forge.Repo{Forge: forge.GitLab, FullName: "acme/sites/blueprints", DefaultBranch: "main"}
	files := map[string][]byte{"basens/Kptfile": []byte(basensKptfile), "basens/ns.yaml": []byte(basensNS("v1"))}
	for i, name := range []string{`a\n~~~\n/merge\n`, `b\n    ` + "```" + `\n/approve\n`, `c\n\r/merge\n`, `d\n/label ~approved\n`} {
		files[fmt.Sprintf("basens/evil-%d.yaml", i)] = []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"%s\"\ndata:\n  a: b\n", name))
	}
	sha := w.gl.Seed(up, "main", files)
	up.ID = w.gl.ProjectID(up)
	if err := c.CreateTag(ctx, up, "basens/v1", sha, "v1"); err != nil {
		t.Fatal(err)
	}
	cfg := approversConfig + "---\napiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: edge\nspec:\n  upstream: {repo: acme/sites/blueprints, package: basens}\n  downstream: {package: team-ns}\n"
	bs, err := c.ListBranches(ctx, w.repo)
	if err != nil || len(bs) != 1 {
		t.Fatalf("branches %v, %v", bs, err)
	}
	after, err := c.PushFiles(ctx, w.repo, "main", bs[0].SHA, "main", map[string][]byte{"kptbot.yaml": []byte(cfg)}, "follow basens")
	if err != nil {
		t.Fatal(err)
	}
	push := w.payload("push.json", merge(map[string]any{"ref": "refs/heads/main", "before": bs[0].SHA, "after": after, "checkout_sha": after,
		"user_username": "dana", "user_name": "dana", "user_id": w.gl.UserID("dana"), "project_id": w.repo.ID}))
	if st := w.deliver("Push Hook", w.key(), glHookSecret, push); st != http.StatusAccepted {
		t.Fatalf("push delivery: HTTP %d", st)
	}
	mrs, err := c.ListOpenChanges(ctx, w.repo)
	if err != nil || len(mrs) != 1 {
		t.Fatalf("open merge requests %+v, %v; want the clone of basens", mrs, err)
	}
	mr := w.gl.MergeRequest(w.repo, mrs[0].Number)
	if !strings.Contains(mr.Description, "ConfigMap a") {
		t.Fatalf("the description does not list the upstream's resources, so the test proves nothing:\n%s", mr.Description)
	}
	if strings.Contains(mr.Description, "ConfigMap a\n") {
		t.Errorf("a resource name's line break reached the description as a line break:\n%s", mr.Description)
	}
	texts := append([]string{mr.Description}, w.botNotes(mr.IID)...)
	for _, text := range texts {
		if qa := quickActions(text); len(qa) > 0 {
			t.Errorf("the bot wrote quick actions GitLab would run as the bot: %q\nin:\n%s", qa, text)
		}
	}
}

// TestAttackGitTokenToUpstreamHost: the bot runs with a git token in its
// environment (KPTBOT_GIT_TOKEN for the company's git server, or an
// Action's GITHUB_TOKEN), and a kptbot.yaml on the default branch names an
// upstream on another server. Reconciling after a signed push hook reads
// that upstream without the token. Not parallel: it sets the environment.
func TestAttackGitTokenToUpstreamHost(t *testing.T) {
	for _, env := range []map[string]string{
		{"KPTBOT_GIT_TOKEN": "kgt_company_secret", "KPTBOT_GIT_HOSTS": "git.company.example"},
		{"GITHUB_TOKEN": "ghs_action_secret"},
	} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		w := newGLWorld(t)
		trap := newTokenTrap(t)
		ctx := context.Background()
		c := w.client()
		cfg := approversConfig + "---\napiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: edge\nspec:\n  upstream: {repo: \"" +
			trap.URL + "/acme/blueprints.git\", package: basens}\n  downstream: {package: team-ns}\n"
		bs, err := c.ListBranches(ctx, w.repo)
		if err != nil || len(bs) != 1 {
			t.Fatalf("branches %v, %v", bs, err)
		}
		after, err := c.PushFiles(ctx, w.repo, "main", bs[0].SHA, "main", map[string][]byte{"kptbot.yaml": []byte(cfg)}, "follow an upstream elsewhere")
		if err != nil {
			t.Fatal(err)
		}
		push := w.payload("push.json", map[string]any{"ref": "refs/heads/main", "before": bs[0].SHA, "after": after, "checkout_sha": after,
			"user_username": "dana", "user_name": "dana", "user_id": w.gl.UserID("dana"), "project_id": w.repo.ID})
		if st := w.deliver("Push Hook", w.key(), glHookSecret, push); st != http.StatusAccepted {
			t.Fatalf("push delivery: HTTP %d", st)
		}
		hits, auths := trap.seen()
		if hits == 0 {
			t.Fatalf("%v: the bot never asked the upstream's server, so the test proves nothing", env)
		}
		if len(auths) > 0 {
			t.Errorf("%v: the git token reached a server it is not for: Authorization %q", env, auths)
		}
		for k := range env {
			t.Setenv(k, "")
		}
	}
}
