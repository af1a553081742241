package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitlab"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
	"github.com/kptbot/kptbot/internal/fleettest"
)

// TestGitLabWritesPerMergeRequest is TestWritesPerPullRequest on the
// httptest GitLab, through the server: a Tag Push Hook fans basens/v1 out
// to n followers, the next tag updates their merge requests, then two
// resyncs. GitLab takes a merge request's labels in its create call, so
// standard mode's 2 writes per merge request are the merge request and
// its commit status, and single mode's 1 is the merge request alone,
// except where the project's "Pipelines must succeed" makes every status
// count (edge-2 in the last case): there the status is written.
func TestGitLabWritesPerMergeRequest(t *testing.T) {
	t.Parallel()
	const n = 3
	for _, c := range []struct {
		mode      string
		single    bool
		perMR     int
		pipelines bool // edge-2 requires pipelines to succeed
	}{{"standard", false, 2, false}, {"single", true, 1, false}, {"single, edge-2 requires pipelines", true, 1, true}} {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			w := &glWorld{t: t, gl: gitlabtest.New(t), done: make(chan struct{}, 100)}
			ctx := context.Background()
			up := forge.Repo{Forge: forge.GitLab, FullName: "acme/blueprints", DefaultBranch: "main"}
			sha := w.gl.Seed(up, "main", map[string][]byte{"basens/Kptfile": []byte(fleettest.BasensKptfile), "basens/ns.yaml": []byte(fleettest.BasensNS("v1"))})
			up.ID, up.CloneURL = w.gl.ProjectID(up), w.gl.CloneURL(up)
			sites := make([]forge.Repo, n)
			for i := range sites {
				sites[i] = forge.Repo{Forge: forge.GitLab, FullName: fmt.Sprintf("acme/sites/edge-%d", i+1), DefaultBranch: "main"}
				w.gl.Seed(sites[i], "main", map[string][]byte{"kptbot.yaml": []byte(fleettest.Follower(fmt.Sprintf("s%d", i+1)))})
				sites[i].ID, sites[i].CloneURL = w.gl.ProjectID(sites[i]), w.gl.CloneURL(sites[i])
			}
			extra := 0
			if c.pipelines {
				w.gl.RequirePipelines(sites[1])
				extra = 1
			}
			b, err := newBot(bot.Options{Forges: map[string]forge.Resolver{forge.GitLab: forge.Static(w.client())}, Name: "kptbot", Login: "kptbot[bot]",
				Logins: map[string]string{forge.GitLab: gitlabtest.BotUsername}, SingleWrite: c.single})
			if err != nil {
				t.Fatal(err)
			}
			s := New(Options{Handler: doneHandler{Handler: b, done: w.done}, Workers: 2, QueueSize: 10,
				Parsers: map[string]WebhookParser{forge.GitLab: func(r *http.Request) (forge.Event, error) {
					return gitlab.ParseWebhook(r, []byte(glHookSecret), 25<<20)
				}}})
			runCtx, cancel := context.WithCancel(ctx)
			stopped := make(chan struct{})
			go func() { s.Run(runCtx); close(stopped) }()
			srv := httptest.NewServer(s.Router())
			t.Cleanup(func() { srv.Close(); cancel(); <-stopped })
			w.bot, w.srv, w.replicas, w.servers = b, srv, []*httptest.Server{srv}, []*Server{s}
			if err := b.RefreshIndex(ctx); err != nil {
				t.Fatal(err)
			}
			var writes restWrites
			w.gl.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodGet && r.Method != http.MethodHead {
					writes.mu.Lock()
					writes.all = append(writes.all, r.Method+" "+r.URL.Path)
					writes.mu.Unlock()
				}
				return false
			})
			plain := w.client()
			tag := func(rev int, sha string) []string {
				t.Helper()
				name := fmt.Sprintf("basens/v%d", rev)
				if err := plain.CreateTag(ctx, up, name, sha, name); err != nil {
					t.Fatal(err)
				}
				writes.take() // the test's own
				if st := w.deliver("Tag Push Hook", w.key(), glHookSecret, w.tagPushHook(up, name, sha)); st != http.StatusAccepted {
					t.Fatalf("tag push: HTTP %d", st)
				}
				if err := s.WaitIdle(ctx); err != nil {
					t.Fatal(err)
				}
				for _, site := range sites {
					if cs, _ := plain.ListOpenChanges(ctx, site); len(cs) != 1 {
						t.Fatalf("%s: %d open merge requests after %s, want 1", site.FullName, len(cs), name)
					}
				}
				return writes.take()
			}
			resync := func() []string {
				t.Helper()
				for _, r := range append([]forge.Repo{up}, sites...) {
					if _, err := b.Reconcile(ctx, r); err != nil {
						t.Fatal(err)
					}
				}
				return writes.take()
			}
			clone := tag(1, sha)
			v2, err := plain.PushFiles(ctx, up, "main", sha, "main", map[string][]byte{"basens/ns.yaml": []byte(fleettest.BasensNS("v2"))}, "v2")
			if err != nil {
				t.Fatal(err)
			}
			update := tag(2, v2)
			first, again := resync(), resync()
			t.Logf("gitlab %s, %d followers: clone: %.3f writes per merge request (%d): %v", c.mode, n, float64(len(clone))/n, len(clone), clone)
			t.Logf("gitlab %s, %d followers: update: %.3f writes per merge request (%d): %v", c.mode, n, float64(len(update))/n, len(update), update)
			t.Logf("gitlab %s, %d followers: resyncs after the fan-out: %d writes, then %d", c.mode, n, len(first), len(again))
			for phase, ws := range map[string][]string{"clone": clone, "update": update} {
				if len(ws) != c.perMR*n+1+extra {
					t.Errorf("%s: %d REST writes for %d merge requests, want %d each, the upstream's dashboard and %d required status: %v", phase, len(ws), n, c.perMR, extra, ws)
				}
				for _, wr := range ws {
					if c.single && strings.Contains(wr, "/statuses/") && !(c.pipelines && strings.Contains(wr, "/edge-2/")) {
						t.Errorf("%s: single mode wrote a commit status nothing requires: %v", phase, ws)
					}
				}
			}
			if len(first)+len(again) > 0 {
				t.Errorf("resyncs after the fan-out wrote %v, then %v; want nothing", first, again)
			}
		})
	}
}
