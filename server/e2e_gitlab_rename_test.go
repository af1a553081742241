package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/fleettest"
)

// systemHook is a GitLab project system hook (GitLab's documented
// payload, from client-go's samples) about project id at path.
func (w *glWorld) systemHook(event, path, oldPath string, id int64) []byte {
	w.t.Helper()
	raw, err := os.ReadFile("../testdata/webhooks/gitlab/client-go-testdata/systemhooks/project_rename.json")
	if err != nil {
		w.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		w.t.Fatal(err)
	}
	m["event_name"], m["path_with_namespace"], m["project_id"], m["project_visibility"] = event, path, id, "private"
	m["path"], m["name"] = path[strings.LastIndex(path, "/")+1:], path[strings.LastIndex(path, "/")+1:]
	if oldPath == "" {
		delete(m, "old_path_with_namespace")
	} else {
		m["old_path_with_namespace"] = oldPath
	}
	out, _ := json.Marshal(m)
	return out
}

// tagPushHook is GitLab's Tag Push Hook for tag at sha on r.
func (w *glWorld) tagPushHook(r forge.Repo, tag, sha string) []byte {
	w.t.Helper()
	url := w.gl.CloneURL(r)
	return w.payload("tag_push.json", map[string]any{
		"project.id": r.ID, "project_id": r.ID, "project.path_with_namespace": r.FullName, "project.git_http_url": url, "project.http_url": url,
		"project.url": url, "project.web_url": "https://gitlab.example/" + r.FullName, "project.homepage": "https://gitlab.example/" + r.FullName,
		"ref": "refs/tags/" + tag, "before": forge.ZeroSHA, "after": sha, "checkout_sha": sha, "user_username": "alice", "user_id": w.gl.UserID("alice"),
	})
}

// TestGitLabRenamedUpstreamKeepsFollowers: GitLab tells of projects
// renamed and created only through system hooks. A follower names its
// upstream acme/blueprints; the upstream is renamed (project_rename), and
// someone creates a new project under the old name (project_create) and
// tags a higher revision of basens there. The impostor's tag reaches no
// follower; a tag on the renamed upstream does, read from the renamed
// project. A system hook without the webhook token is refused like any
// other hook.
func TestGitLabRenamedUpstreamKeepsFollowers(t *testing.T) {
	t.Parallel()
	w := newGLWorld(t)
	ctx := context.Background()
	c := w.client()
	up := forge.Repo{Forge: forge.GitLab, FullName: "acme/blueprints", DefaultBranch: "main"}
	sha := w.gl.Seed(up, "main", map[string][]byte{"basens/Kptfile": []byte(fleettest.BasensKptfile), "basens/ns.yaml": []byte(fleettest.BasensNS("v1"))})
	if err := c.CreateTag(ctx, up, "basens/v1", sha, "v1"); err != nil {
		t.Fatal(err)
	}
	upID := w.gl.ProjectID(up)
	site := forge.Repo{Forge: forge.GitLab, FullName: "acme/sites/edge-2", DefaultBranch: "main"}
	w.gl.Seed(site, "main", map[string][]byte{"README.md": []byte("site\n"), "kptbot.yaml": []byte(fleettest.Follower("ns"))})
	if err := w.bot.RefreshIndex(ctx); err != nil {
		t.Fatal(err)
	}
	openMRs := func() []forge.Change {
		t.Helper()
		cs, err := c.ListOpenChanges(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}

	// A forged rename, without the token or with a wrong one: refused.
	forged := w.systemHook("project_rename", "mallory/blueprints", "acme/blueprints", upID)
	for _, token := range []string{"", "not-the-secret"} {
		if st := w.deliver("System Hook", w.key(), token, forged); st != http.StatusUnauthorized {
			t.Fatalf("system hook with token %q: HTTP %d, want 401", token, st)
		}
	}

	// The upstream is renamed; a new project takes the old name and tags
	// basens/v2 with its own content.
	w.gl.Rename(up, "acme/blueprints-v2")
	renamed := forge.Repo{Forge: forge.GitLab, FullName: "acme/blueprints-v2", DefaultBranch: "main", ID: upID}
	if st := w.deliver("System Hook", w.key(), glHookSecret, w.systemHook("project_rename", renamed.FullName, up.FullName, upID)); st != http.StatusAccepted {
		t.Fatalf("project_rename: HTTP %d", st)
	}
	impostor := forge.Repo{Forge: forge.GitLab, FullName: "acme/blueprints", DefaultBranch: "main"}
	evil := w.gl.Seed(impostor, "main", map[string][]byte{"basens/Kptfile": []byte(fleettest.BasensKptfile), "basens/ns.yaml": []byte(fleettest.BasensNS("mallory"))})
	impostor.ID = w.gl.ProjectID(impostor)
	if impostor.ID == upID {
		t.Fatal("the fake gave the new project the renamed one's id")
	}
	if st := w.deliver("System Hook", w.key(), glHookSecret, w.systemHook("project_create", impostor.FullName, "", impostor.ID)); st != http.StatusAccepted {
		t.Fatalf("project_create: HTTP %d", st)
	}
	if err := c.CreateTag(ctx, impostor, "basens/v2", evil, "v2"); err != nil {
		t.Fatal(err)
	}
	if st := w.deliver("Tag Push Hook", w.key(), glHookSecret, w.tagPushHook(impostor, "basens/v2", evil)); st != http.StatusAccepted {
		t.Fatalf("impostor's tag push: HTTP %d", st)
	}
	if mrs := openMRs(); len(mrs) != 0 {
		t.Fatalf("the impostor's tag opened %d merge requests on the follower (%s)", len(mrs), mrs[0].Title)
	}

	// The renamed upstream publishes basens/v2: the follower gets it, read
	// from the renamed project.
	real, err := c.PushFiles(ctx, renamed, "main", sha, "main", map[string][]byte{"basens/ns.yaml": []byte(fleettest.BasensNS("v2"))}, "basens v2")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTag(ctx, renamed, "basens/v2", real, "v2"); err != nil {
		t.Fatal(err)
	}
	if st := w.deliver("Tag Push Hook", w.key(), glHookSecret, w.tagPushHook(renamed, "basens/v2", real)); st != http.StatusAccepted {
		t.Fatalf("renamed upstream's tag push: HTTP %d", st)
	}
	mrs := openMRs()
	if len(mrs) != 1 {
		t.Fatalf("after the renamed upstream's tag: %d merge requests on the follower, want 1", len(mrs))
	}
	tree, err := c.ReadTree(ctx, site, mrs[0].HeadRef, "team-ns")
	if err != nil {
		t.Fatal(err)
	}
	ns := string(tree.Files["ns.yaml"])
	if !strings.Contains(ns, "owner: v2") || strings.Contains(ns, "mallory") {
		t.Errorf("the follower's update holds:\n%s\nwant the renamed upstream's basens/v2 (owner: v2), nothing of the impostor's", ns)
	}
}
