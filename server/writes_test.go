package server

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
)

// restWrites counts the REST writes (every request but GET and HEAD) the
// bot sends the httptest GitHub, by method and path.
type restWrites struct {
	mu  sync.Mutex
	all []string
}

func (c *restWrites) watch(w *ghWorld) {
	w.gh.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		// git's smart HTTP (a push) is not the REST API.
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !strings.Contains(r.URL.Path, ".git/") {
			c.mu.Lock()
			c.all = append(c.all, r.Method+" "+r.URL.Path)
			c.mu.Unlock()
		}
		return false
	})
}

// take returns the writes so far and forgets them.
func (c *restWrites) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.all
	c.all = nil
	sort.Strings(out)
	return out
}

// TestWritesPerPullRequest is the performance issue's write budget, on the
// httptest GitHub through the server: a tag fanned out to n followers
// opens n clone pull requests, and the next tag updates them, with 2 REST
// writes per pull request (the pull request with its labels, its check)
// plus the upstream's dashboard once per fan-out; resyncs write nothing
// that is already there. The counts are deterministic.
func TestWritesPerPullRequest(t *testing.T) {
	t.Parallel()
	const n = 4
	w := newGHWorld(t, 0)
	ctx := context.Background()
	up := forge.Repo{Forge: forge.GitHub, FullName: "acme/blueprints", DefaultBranch: "main", CloneURL: w.gh.GitURL + "acme/blueprints.git"}
	sha := w.gh.Seed(up, "main", map[string][]byte{"basens/Kptfile": []byte(basensKptfile), "basens/ns.yaml": []byte(basensNS("v1"))})
	plain, err := github.NewClient(nil, w.gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	plain.GitURL = w.gh.GitURL
	for i := 1; i <= n; i++ {
		r := forge.Repo{Forge: forge.GitHub, FullName: fmt.Sprintf("acme/site-%d", i), DefaultBranch: "main"}
		w.gh.Seed(r, "main", map[string][]byte{"kptbot.yaml": []byte(fmt.Sprintf("apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: s%d\nspec:\n  upstream: {repo: acme/blueprints, package: basens}\n  downstream: {package: team-ns}\n", i))})
	}
	client, err := github.NewClient(nil, w.gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	client.GitURL = w.gh.GitURL
	b, err := newBot(writesOptions(client))
	if err != nil {
		t.Fatal(err)
	}
	w.addNode(b)
	var writes restWrites
	writes.watch(w)
	tag := func(rev int, sha string) {
		t.Helper()
		if err := plain.CreateTag(ctx, up, fmt.Sprintf("basens/v%d", rev), sha, ""); err != nil {
			t.Fatal(err)
		}
		writes.take() // the test's own tag
		body := w.payload("push/tag-created.ghes.payload.json", map[string]any{
			"ref": fmt.Sprintf("refs/tags/basens/v%d", rev), "after": sha, "before": forge.ZeroSHA, "created": true, "deleted": false,
			"repository.full_name": up.FullName, "repository.name": "blueprints", "repository.clone_url": up.CloneURL, "sender.login": "alice",
		})
		if st := w.deliver(0, "push", w.id(), body); st != http.StatusAccepted {
			t.Fatalf("tag push delivery: HTTP %d", st)
		}
		if err := w.nodes[0].server.WaitIdle(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tag(1, sha)
	clone := writes.take()
	for i := 1; i <= n; i++ {
		if cs, _ := plain.ListOpenChanges(ctx, forge.Repo{FullName: fmt.Sprintf("acme/site-%d", i)}); len(cs) != 1 {
			t.Fatalf("site-%d: %d open pull requests after v1, want 1", i, len(cs))
		}
	}
	v2, err := plain.PushFiles(ctx, up, "main", sha, sha, map[string][]byte{"basens/ns.yaml": []byte(basensNS("v2"))}, "v2")
	if err != nil {
		t.Fatal(err)
	}
	tag(2, v2)
	update := writes.take()
	// Resyncs write nothing: no check again, the upstream's dashboard
	// keeps the fan-out's section, the bot's own pull requests get no
	// status comment while nobody takes part, and a follower whose only
	// news is its open pull request gets no dashboard issue yet.
	resync := func() []string {
		t.Helper()
		for i := 0; i <= n; i++ {
			r := up
			if i > 0 {
				r = forge.Repo{Forge: forge.GitHub, FullName: fmt.Sprintf("acme/site-%d", i), DefaultBranch: "main", CloneURL: w.gh.GitURL + fmt.Sprintf("acme/site-%d.git", i)}
			}
			if _, err := b.Reconcile(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		return writes.take()
	}
	first := resync()
	t.Logf("first resync: %d writes: %v", len(first), first)
	if len(first) > 0 {
		t.Errorf("the first resync after the fan-out wrote %d times, want none: %v", len(first), first)
	}
	if again := resync(); len(again) > 0 {
		t.Errorf("a resync with nothing new wrote %d times: %v", len(again), again)
	}
	t.Logf("clone: %.2f writes per pull request: %v", float64(len(clone))/n, clone)
	t.Logf("update: %.2f writes per pull request: %v", float64(len(update))/n, update)
	if len(clone) > 2*n+1 {
		t.Errorf("%d REST writes for %d clone pull requests, want at most 2 each and the dashboard: %v", len(clone), n, clone)
	}
	if len(update) > 2*n+1 {
		t.Errorf("%d REST writes for %d updated pull requests, want at most 2 each and the dashboard: %v", len(update), n, update)
	}
}

// writesOptions is the bot of TestWritesPerPullRequest.
func writesOptions(f any) bot.Options {
	return bot.Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(f)}, Name: "kptbot", Login: "kptbot[bot]"}
}
