package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/internal/fleettest"
	"github.com/kptbot/kptbot/review"
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

// writesFanOut is TestWritesPerPullRequest's world: an upstream, n
// followers with a PackageVariant each, and the bot, on the httptest
// GitHub through the server, with every REST write counted.
type writesFanOut struct {
	t      *testing.T
	w      *ghWorld
	b      *bot.Bot
	plain  *github.Client
	up     forge.Repo
	n      int
	writes restWrites
}

func newWritesFanOut(t *testing.T, n int, single bool) *writesFanOut {
	t.Helper()
	f := &writesFanOut{t: t, w: newGHWorld(t, 0), n: n}
	f.up = forge.Repo{Forge: forge.GitHub, FullName: "acme/blueprints", DefaultBranch: "main", CloneURL: f.w.gh.GitURL + "acme/blueprints.git"}
	var err error
	if f.plain, err = github.NewClient(nil, f.w.gh.URL); err != nil {
		t.Fatal(err)
	}
	f.plain.GitURL = f.w.gh.GitURL
	for i := 1; i <= n; i++ {
		f.w.gh.Seed(f.site(i), "main", map[string][]byte{"kptbot.yaml": []byte(fleettest.Follower(fmt.Sprintf("s%d", i)))})
	}
	client, err := github.NewClient(nil, f.w.gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	client.GitURL = f.w.gh.GitURL
	opts := writesOptions(client)
	opts.SingleWrite = single
	if f.b, err = newBot(opts); err != nil {
		t.Fatal(err)
	}
	f.w.addNode(f.b)
	f.writes.watch(f.w)
	return f
}

func (f *writesFanOut) site(i int) forge.Repo {
	name := fmt.Sprintf("acme/site-%d", i)
	return forge.Repo{Forge: forge.GitHub, FullName: name, DefaultBranch: "main", CloneURL: f.w.gh.GitURL + name + ".git"}
}

// tag tags sha as basens/v<rev> on the upstream, delivers the tag push and
// returns the writes the bot made until it was idle.
func (f *writesFanOut) tag(rev int, sha string) []string {
	t, ctx := f.t, context.Background()
	t.Helper()
	if err := f.plain.CreateTag(ctx, f.up, fmt.Sprintf("basens/v%d", rev), sha, ""); err != nil {
		t.Fatal(err)
	}
	f.writes.take() // the test's own tag
	body := f.w.payload("push/tag-created.ghes.payload.json", map[string]any{
		"ref": fmt.Sprintf("refs/tags/basens/v%d", rev), "after": sha, "before": forge.ZeroSHA, "created": true, "deleted": false,
		"repository.full_name": f.up.FullName, "repository.name": "blueprints", "repository.clone_url": f.up.CloneURL, "sender.login": "alice",
	})
	if st := f.w.deliver(0, "push", f.w.id(), body); st != http.StatusAccepted {
		t.Fatalf("tag push delivery: HTTP %d", st)
	}
	if err := f.w.nodes[0].server.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= f.n; i++ {
		if cs, _ := f.plain.ListOpenChanges(ctx, f.site(i)); len(cs) != 1 {
			t.Fatalf("site-%d: %d open pull requests after v%d, want 1", i, len(cs), rev)
		}
	}
	return f.writes.take()
}

// resync reconciles the upstream and every follower and returns the
// writes.
func (f *writesFanOut) resync() []string {
	f.t.Helper()
	for i := 0; i <= f.n; i++ {
		r := f.up
		if i > 0 {
			r = f.site(i)
		}
		if _, err := f.b.Reconcile(context.Background(), r); err != nil {
			f.t.Fatal(err)
		}
	}
	return f.writes.take()
}

// run fans v1 then v2 out and resyncs twice: the writes of each phase.
func (f *writesFanOut) run() (clone, update, first, again []string) {
	f.t.Helper()
	sha := f.w.gh.Seed(f.up, "main", map[string][]byte{"basens/Kptfile": []byte(basensKptfile), "basens/ns.yaml": []byte(basensNS("v1"))})
	f.writes.take()
	clone = f.tag(1, sha)
	v2, err := f.plain.PushFiles(context.Background(), f.up, "main", sha, sha, map[string][]byte{"basens/ns.yaml": []byte(basensNS("v2"))}, "v2")
	if err != nil {
		f.t.Fatal(err)
	}
	update = f.tag(2, v2)
	return clone, update, f.resync(), f.resync()
}

// TestWritesPerPullRequest is the performance issue's write budget, on the
// httptest GitHub through the server (whose requests are checked against
// GitHub's OpenAPI description): a tag fanned out to n followers opens n
// clone pull requests and the next tag updates them, with 2 REST writes
// per pull request in standard mode (the pull request, its check) and 1
// in single mode (the pull request, its description the render report),
// plus the upstream's dashboard once per fan-out; resyncs then write
// nothing: no check again, the upstream's dashboard keeps the fan-out's
// section, the bot's own pull requests get no status comment while
// nobody takes part, and a follower whose only news is its open pull
// request gets no dashboard issue yet. The counts are deterministic and
// asserted exactly, so a write that sneaks back in fails the test.
//
// KPTBOT_WRITES_FOLLOWERS sets n (default 4; `make bench` also runs 25).
func TestWritesPerPullRequest(t *testing.T) {
	t.Parallel()
	n := 4
	if v, err := strconv.Atoi(os.Getenv("KPTBOT_WRITES_FOLLOWERS")); err == nil && v > 0 {
		n = v
	}
	for _, c := range []struct {
		mode   string
		single bool
		perPR  int
	}{{"standard", false, 2}, {"single", true, 1}} {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			f := newWritesFanOut(t, n, c.single)
			clone, update, first, again := f.run()
			t.Logf("%s, %d followers: clone: %.3f writes per pull request (%d): %v", c.mode, n, float64(len(clone))/float64(n), len(clone), short(clone))
			t.Logf("%s, %d followers: update: %.3f writes per pull request (%d): %v", c.mode, n, float64(len(update))/float64(n), len(update), short(update))
			t.Logf("%s, %d followers: resyncs after the fan-out: %d writes, then %d", c.mode, n, len(first), len(again))
			for phase, ws := range map[string][]string{"clone": clone, "update": update} {
				if len(ws) != c.perPR*n+1 {
					t.Errorf("%s: %d REST writes for %d pull requests, want %d each and the upstream's dashboard: %v", phase, len(ws), n, c.perPR, ws)
				}
				for _, wr := range ws {
					if c.single && strings.Contains(wr, "/check-runs") {
						t.Errorf("%s: single mode wrote a check nothing requires: %v", phase, ws)
					}
				}
			}
			if len(first)+len(again) > 0 {
				t.Errorf("resyncs after the fan-out wrote %v, then %v; want nothing", first, again)
			}
			if c.single {
				pr, err := f.plain.GetChange(context.Background(), f.site(1), 1)
				if err != nil || !strings.Contains(pr.Body, "`kptbot/team-ns` rendered. This description is its report") {
					t.Errorf("single mode: the description does not carry the render result: %v\n%s", err, pr.Body)
				}
			}
		})
	}
}

// TestSingleWriteKeepsRequiredChecks: in single mode a follower whose
// default branch's protection requires the package's check still gets it
// (the pull request could not merge without it), the others do not.
func TestSingleWriteKeepsRequiredChecks(t *testing.T) {
	t.Parallel()
	const n = 3
	f := newWritesFanOut(t, n, true)
	f.w.gh.Protect(f.site(2), "main", "kptbot/team-ns")
	clone, update, first, again := f.run()
	for phase, ws := range map[string][]string{"clone": clone, "update": update} {
		var checks []string
		for _, wr := range ws {
			if strings.Contains(wr, "/check-runs") {
				checks = append(checks, wr)
			}
		}
		if len(ws) != n+2 || len(checks) != 1 || checks[0] != "POST /repos/acme/site-2/check-runs" {
			t.Errorf("%s: writes %v; want one per pull request, the dashboard and site-2's required check", phase, ws)
		}
	}
	if len(first)+len(again) > 0 {
		t.Errorf("resyncs after the fan-out wrote %v, then %v; want nothing", first, again)
	}
	head := f.change(2).HeadSHA
	if _, ok := f.w.gh.Check(f.site(2), head, "kptbot/team-ns"); !ok {
		t.Errorf("site-2's required check is not on its head %s", head)
	}
}

func (f *writesFanOut) change(i int) forge.Change {
	f.t.Helper()
	c, err := f.plain.GetChange(context.Background(), f.site(i), 1)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// short is a list of writes as a log line shows it: the first few.
func short(ws []string) []string {
	if len(ws) > 9 {
		return append(ws[:9:9], fmt.Sprintf("… %d more", len(ws)-9))
	}
	return ws
}

// writesOptions is the bot of TestWritesPerPullRequest.
func writesOptions(f any) bot.Options {
	return bot.Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(f)}, Name: "kptbot", Login: "kptbot[bot]"}
}

// TestBotChangeRecordedWhenPeopleTakePart: the bot's own update change,
// which has no status comment while nobody takes part, gets one with the
// first person's word. A bare approve as that first word cannot be bound
// (the bot never recorded when it first saw the head, so the head may
// have moved after the comment was written): it is refused with the
// commit to name, and the record begins there; the next bare approve,
// written after it, counts.
func TestBotChangeRecordedWhenPeopleTakePart(t *testing.T) {
	t.Parallel()
	f := newWritesFanOut(t, 1, false)
	f.run()
	w := f.w
	w.repo = f.site(1)
	w.gh.SetPermission(w.repo, "alice", "write")
	if cs := w.comments(1); len(cs) != 0 {
		t.Fatalf("the untouched pull request has comments: %q", cs)
	}
	w.comment(1, "alice", "/kptbot approve")
	cs := w.comments(1)
	status := 0
	for _, c := range cs {
		if strings.HasPrefix(c, review.StatusHeader) {
			status++
		}
	}
	if status != 1 || !strings.Contains(strings.Join(cs, "\n"), "Approve it explicitly with `/kptbot approve "+f.change(1).HeadSHA+"`") {
		t.Fatalf("after the first bare approve: want the refusal naming the head and the bot's status comment, got %q", cs)
	}
	if w.gh.Merges(w.repo) != 0 {
		t.Fatal("a bare approve the bot could not bind merged the change")
	}
	w.comment(1, "alice", "/kptbot approve")
	if c := f.change(1); !c.Merged {
		t.Fatalf("the second bare approve, written after the record began, did not publish: %q", w.comments(1))
	}
}

// TestSingleWriteOpensDeletionsWithoutLabels: GitHub's create call takes
// no labels, so in single mode the deletion change the bot opens goes
// without its kptbot:deletion label (no second write); standard mode
// labels it.
func TestSingleWriteOpensDeletionsWithoutLabels(t *testing.T) {
	t.Parallel()
	for _, single := range []bool{false, true} {
		w := newGHWorldWith(t, func(o *bot.Options) { o.SingleWrite = single })
		n, _ := w.openPR("dana", "scale", map[string][]byte{"pkgs/ns/cm.yaml": scaled("3")}, true)
		var writes restWrites
		writes.watch(w)
		w.comment(n, "bob", "/kptbot delete pkgs/ns")
		var del forge.Change
		open, err := w.client().ListOpenChanges(context.Background(), w.repo)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range open {
			if strings.HasPrefix(c.Title, "Delete package pkgs/ns") {
				del = c
			}
		}
		if del.Number == 0 {
			t.Fatalf("single=%v: no deletion change opened; comments %q", single, w.comments(n))
		}
		labelled := 0
		for _, wr := range writes.take() {
			if strings.HasSuffix(wr, fmt.Sprintf("/issues/%d/labels", del.Number)) {
				labelled++
			}
		}
		if single && (labelled != 0 || len(del.Labels) != 0) {
			t.Errorf("single mode labelled the deletion change (%d label writes, labels %v)", labelled, del.Labels)
		}
		if !single && (labelled != 1 || len(del.Labels) != 1 || del.Labels[0] != "kptbot:deletion") {
			t.Errorf("standard mode: %d label writes, labels %v; want kptbot:deletion", labelled, del.Labels)
		}
	}
}
