package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/fleettest"
)

// repoPayload is a real GitHub payload from file about r, with set on top.
func (w *ghWorld) repoPayload(file string, r forge.Repo, set map[string]any) []byte {
	fields := w.repoFields(r)
	for k, v := range set {
		fields[k] = v
	}
	return w.payload(file, fields)
}

// tagPushed tells the bot, as GitHub does, that tag was pushed to r at
// sha: a create event and a push event.
func (w *ghWorld) tagPushed(r forge.Repo, tag, sha string) {
	w.t.Helper()
	if st := w.deliver(0, "create", w.id(), w.repoPayload("create/payload.json", r, map[string]any{
		"ref": tag, "ref_type": "tag", "sender.login": "alice"})); st != http.StatusAccepted && st != http.StatusOK {
		w.t.Fatalf("create event for %s on %s: HTTP %d", tag, r.FullName, st)
	}
	w.pushEvent(r, "refs/tags/"+tag, sha, "alice")
}

// TestGitHubRenamedUpstreamKeepsFollowers: a follower names its upstream
// acme/blueprints; the upstream is renamed (repository renamed, with
// changes.repository.name.from), someone creates a new repository under
// the old name (repository created) and tags a higher revision of basens
// there (create and push events). The impostor's tag reaches no
// follower, though GitHub's redirect from the old name has ended; a tag
// on the renamed upstream does, read from the renamed repository. A
// rename without a valid signature is refused like any other delivery.
func TestGitHubRenamedUpstreamKeepsFollowers(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	ctx := context.Background()
	c := w.client()
	up := forge.Repo{Forge: forge.GitHub, FullName: "acme/blueprints", DefaultBranch: "main"}
	sha := w.gh.Seed(up, "main", map[string][]byte{"basens/Kptfile": []byte(fleettest.BasensKptfile), "basens/ns.yaml": []byte(fleettest.BasensNS("v1"))})
	if err := c.CreateTag(ctx, up, "basens/v1", sha, "v1"); err != nil {
		t.Fatal(err)
	}
	upID := w.gh.RepoID(up)
	site := forge.Repo{Forge: forge.GitHub, FullName: "acme/edge-2", DefaultBranch: "main"}
	w.gh.Seed(site, "main", map[string][]byte{"README.md": []byte("site\n"), "kptbot.yaml": []byte(fleettest.Follower("ns"))})
	if err := w.nodes[0].bot.RefreshIndex(ctx); err != nil {
		t.Fatal(err)
	}
	openPRs := func() []forge.Change {
		t.Helper()
		cs, err := c.ListOpenChanges(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}

	// The upstream is renamed. Until a new repository takes the name,
	// GitHub redirects the old one.
	w.gh.Rename(up, "acme/blueprints-v2")
	renamed := forge.Repo{Forge: forge.GitHub, FullName: "acme/blueprints-v2", DefaultBranch: "main", ID: upID}
	if got := w.gh.RepoID(renamed); got != upID {
		t.Fatalf("the renamed repository has id %d, want %d", got, upID)
	}
	if tags, err := c.ListTags(ctx, up); err != nil || len(tags) != 1 {
		t.Fatalf("the old name while it redirects: tags %v, %v; want the renamed repository's basens/v1", tags, err)
	}
	rename := w.repoPayload("derived/repository.renamed.payload.json", renamed, map[string]any{
		"changes.repository.name.from": "blueprints", "sender.login": "alice"})
	forged := strings.Replace(string(rename), "blueprints-v2", "mallory-v2", -1)
	req, _ := http.NewRequest("POST", w.nodes[0].srv.URL+"/webhooks/github", strings.NewReader(forged))
	req.Header.Set("X-GitHub-Event", "repository")
	req.Header.Set("X-GitHub-Delivery", w.id())
	req.Header.Set("X-Hub-Signature-256", "sha256=00")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unsigned rename: HTTP %d, want 401", resp.StatusCode)
	}
	if st := w.deliver(0, "repository", w.id(), rename); st != http.StatusAccepted {
		t.Fatalf("repository renamed: HTTP %d", st)
	}

	// A new repository takes the old name and tags basens/v2 with its
	// own content.
	impostor := forge.Repo{Forge: forge.GitHub, FullName: "acme/blueprints", DefaultBranch: "main"}
	evil := w.gh.Seed(impostor, "main", map[string][]byte{"basens/Kptfile": []byte(fleettest.BasensKptfile), "basens/ns.yaml": []byte(fleettest.BasensNS("mallory"))})
	impostor.ID = w.gh.RepoID(impostor)
	if impostor.ID == upID || impostor.ID == 0 {
		t.Fatalf("the fake gave the new repository id %d (the renamed one has %d)", impostor.ID, upID)
	}
	if st := w.deliver(0, "repository", w.id(), w.repoPayload("derived/repository.created.payload.json", impostor, map[string]any{
		"sender.login": "mallory"})); st != http.StatusAccepted {
		t.Fatalf("repository created: HTTP %d", st)
	}
	if err := c.CreateTag(ctx, impostor, "basens/v2", evil, "v2"); err != nil {
		t.Fatal(err)
	}
	w.tagPushed(impostor, "basens/v2", evil)
	if prs := openPRs(); len(prs) != 0 {
		t.Fatalf("the impostor's tag opened %d pull requests on the follower (%s)", len(prs), prs[0].Title)
	}

	// The renamed upstream publishes basens/v2: the follower gets it,
	// read from the renamed repository.
	real, err := c.PushFiles(ctx, renamed, "main", sha, "main", map[string][]byte{"basens/ns.yaml": []byte(fleettest.BasensNS("v2"))}, "basens v2")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTag(ctx, renamed, "basens/v2", real, "v2"); err != nil {
		t.Fatal(err)
	}
	w.tagPushed(renamed, "basens/v2", real)
	prs := openPRs()
	if len(prs) != 1 {
		t.Fatalf("after the renamed upstream's tag: %d pull requests on the follower, want 1", len(prs))
	}
	tree, err := c.ReadTree(ctx, site, prs[0].HeadRef, "team-ns")
	if err != nil {
		t.Fatal(err)
	}
	ns := string(tree.Files["ns.yaml"])
	if !strings.Contains(ns, "owner: v2") || strings.Contains(ns, "mallory") {
		t.Errorf("the follower's update holds:\n%s\nwant the renamed upstream's basens/v2 (owner: v2), nothing of the impostor's", ns)
	}
}
