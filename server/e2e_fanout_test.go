package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/gitlab"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
	"github.com/kptbot/kptbot/forge/ratelimit"
)

// TestFanOutAcrossForgesEndToEnd: an upstream on GitHub publishes basens
// v1 (a signed tag push delivery); two GitHub repositories and one GitLab
// project that follow it get clone changes, through the webhook server,
// both adapters and real git over HTTP. GitHub answers the second pull
// request with a secondary-limit 403 and Retry-After: the scheduler waits
// and the fan-out completes. Then v2: the same changes are updated.
func TestFanOutAcrossForgesEndToEnd(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 0)
	gl := gitlabtest.New(t)
	ctx := context.Background()
	up := forge.Repo{Forge: forge.GitHub, FullName: "acme/blueprints", DefaultBranch: "main", CloneURL: w.gh.GitURL + "acme/blueprints.git"}
	sha := w.gh.Seed(up, "main", map[string][]byte{"basens/Kptfile": []byte(basensKptfile), "basens/ns.yaml": []byte(basensNS("v1"))})
	plain, err := github.NewClient(nil, w.gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	plain.GitURL = w.gh.GitURL
	if err := plain.CreateTag(ctx, up, "basens/v1", sha, "v1"); err != nil {
		t.Fatal(err)
	}
	follow := func(name, repo string) []byte {
		return []byte(fmt.Sprintf("apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: %s\nspec:\n  upstream: {repo: %q, package: basens}\n  downstream: {package: team-ns}\n  labels: {site: %s}\n", name, repo, name))
	}
	ghDown := []forge.Repo{{Forge: forge.GitHub, FullName: "acme/site-1"}, {Forge: forge.GitHub, FullName: "acme/site-2"}}
	for _, r := range ghDown {
		w.gh.Seed(r, "main", map[string][]byte{"kptbot.yaml": follow(strings.TrimPrefix(r.FullName, "acme/"), "acme/blueprints")})
	}
	edge := forge.Repo{Forge: forge.GitLab, FullName: "acme/sites/edge-1", DefaultBranch: "main"}
	gl.Seed(edge, "main", map[string][]byte{"kptbot.yaml": follow("edge-1", up.CloneURL)})

	// GitHub's secondary limit hits the first pull request for site-2.
	var limited atomic.Bool
	w.gh.Intercept(func(rw http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && r.URL.Path == "/repos/acme/site-2/pulls" && limited.CompareAndSwap(false, true) {
			rw.Header().Set("Retry-After", "1")
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusForbidden)
			fmt.Fprint(rw, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`)
			return true
		}
		return false
	})
	sched := ratelimit.New(ratelimit.Limits{PerMinute: 1000, PerHour: 10000, MaxAttempts: 3, BaseBackoff: 10 * time.Millisecond}, nil)
	ghc, err := github.NewClient(&http.Client{Transport: github.NewScheduledTransport(http.DefaultTransport, sched)}, w.gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	ghc.GitURL = w.gh.GitURL
	glc, err := gitlab.NewClient(gl.HTTPClient, gl.URL, gitlabtest.Token)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBot(bot.Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(ghc), forge.GitLab: forge.Static(glc)}, Name: "kptbot", Login: "kptbot[bot]",
		Logins: map[string]string{forge.GitLab: gitlabtest.BotUsername}})
	if err != nil {
		t.Fatal(err)
	}
	w.addNode(b)

	tagPush := func(n int, sha string) {
		t.Helper()
		body := w.payload("push/tag-created.ghes.payload.json", map[string]any{
			"ref": fmt.Sprintf("refs/tags/basens/v%d", n), "after": sha, "before": forge.ZeroSHA, "created": true, "deleted": false,
			"repository.full_name": up.FullName, "repository.name": "blueprints", "repository.clone_url": up.CloneURL, "sender.login": "alice",
		})
		if st := w.deliver(0, "push", w.id(), body); st != http.StatusAccepted {
			t.Fatalf("tag push delivery: HTTP %d", st)
		}
	}
	tagPush(1, sha)
	if !limited.Load() {
		t.Fatal("the secondary limit was never hit: the test proves nothing")
	}
	changes := map[string]forge.Change{}
	for _, r := range ghDown {
		cs, err := plain.ListOpenChanges(ctx, r)
		if err != nil || len(cs) != 1 || !strings.Contains(cs[0].Title, "clone") {
			t.Fatalf("%s: open changes %+v, %v; want one clone change", r.FullName, cs, err)
		}
		changes[r.FullName] = cs[0]
		if c, ok := w.gh.Check(r, cs[0].HeadSHA, "kptbot/team-ns"); !ok || c.Conclusion != "success" {
			t.Errorf("%s: check %+v %v", r.FullName, c, ok)
		}
	}
	mrs, err := glc.ListOpenChanges(ctx, edge)
	if err != nil || len(mrs) != 1 {
		t.Fatalf("GitLab %s: open merge requests %+v, %v; want one", edge.FullName, mrs, err)
	}
	snap, err := glc.ReadTree(ctx, edge, mrs[0].HeadSHA, "team-ns")
	if err != nil || !strings.Contains(string(snap.Files["ns.yaml"]), "owner: v1") || !strings.Contains(string(snap.Files["Kptfile"]), up.CloneURL) {
		t.Fatalf("GitLab clone of a GitHub upstream: %v %v", snap.Files, err)
	}

	// v2 while the changes are open: the same changes move.
	v2, err := plain.PushFiles(ctx, up, "main", sha, sha, map[string][]byte{"basens/ns.yaml": []byte(basensNS("v2"))}, "v2")
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.CreateTag(ctx, up, "basens/v2", v2, "v2"); err != nil {
		t.Fatal(err)
	}
	tagPush(2, v2)
	for _, r := range ghDown {
		cs, _ := plain.ListOpenChanges(ctx, r)
		if len(cs) != 1 || cs[0].Number != changes[r.FullName].Number || cs[0].HeadSHA == changes[r.FullName].HeadSHA {
			t.Errorf("%s after v2: %+v, want #%d updated in place", r.FullName, cs, changes[r.FullName].Number)
		}
	}
	mrs2, _ := glc.ListOpenChanges(ctx, edge)
	if len(mrs2) != 1 || mrs2[0].Number != mrs[0].Number || mrs2[0].HeadSHA == mrs[0].HeadSHA {
		t.Errorf("GitLab after v2: %+v, want !%d updated in place", mrs2, mrs[0].Number)
	}
}
