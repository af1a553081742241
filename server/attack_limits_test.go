package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
)

// newGHWorldWith is a one-replica world whose bot has opts applied.
func newGHWorldWith(t *testing.T, set func(*bot.Options)) *ghWorld {
	t.Helper()
	w := newGHWorld(t, 0)
	client, err := github.NewClient(nil, w.gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	client.GitURL = w.gh.GitURL
	opts := bot.Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(client)}, Name: "kptbot", Login: "kptbot[bot]"}
	set(&opts)
	b, err := newBot(opts)
	if err != nil {
		t.Fatal(err)
	}
	w.addNode(b)
	return w
}

// TestAttackGitHubTreeOverCap is item 16: a pull request whose head holds
// more files than the cap is reported on the change (a failed check and a
// status line), never rendered nor published, and the server keeps
// serving other changes.
func TestAttackGitHubTreeOverCap(t *testing.T) {
	t.Parallel()
	w := newGHWorldWith(t, func(o *bot.Options) { o.MaxTreeFiles = 40 })
	files := map[string][]byte{"pkgs/ns/cm.yaml": scaled("3")}
	for i := 0; i < 60; i++ {
		files[fmt.Sprintf("junk/%03d.txt", i)] = []byte("x")
	}
	n, head := w.openPR("mallory", "big", files, false)
	check, ok := w.gh.Check(w.repo, head, "kptbot/limits")
	if !ok || check.Conclusion != "failure" {
		t.Fatalf("check %s on the oversized head = %+v, %v; want a failure", "kptbot/limits", check, ok)
	}
	said := false
	for _, c := range w.comments(n) {
		said = said || strings.Contains(c, "over kptbot's limits")
	}
	if !said {
		t.Errorf("no status line about the limits: %q", w.comments(n))
	}
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(n, "alice", forge.ReviewApproved, head))
	w.mustNotMerge(n, "a change over the tree cap")
	// The same server still serves a normal change.
	m, mhead := w.openPR("dana", "scale", map[string][]byte{"pkgs/ns/cm.yaml": scaled("4")}, false)
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(m, "alice", forge.ReviewApproved, mhead))
	if !w.change(m).Merged {
		t.Fatalf("a normal change was not published after an oversized one: %q", w.comments(m))
	}
}

// TestAttackGitHubRenderOverBudget is item 13's bot part: a guardrail
// that loops is stopped at the render budget; the check fails naming the
// budget, nothing is published, and the worker is free again.
func TestAttackGitHubRenderOverBudget(t *testing.T) {
	t.Parallel()
	w := newGHWorldWith(t, func(o *bot.Options) { o.RenderTimeout = 300 * time.Millisecond })
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
            n = 0
            for i in range(9000000):
              n += i
`)
	start := time.Now()
	n, head := w.openPR("dana", "scale", map[string][]byte{"pkgs/ns/cm.yaml": scaled("3")}, false)
	check, ok := w.gh.Check(w.repo, head, "kptbot/pkgs/ns")
	if !ok || check.Conclusion != "failure" || !strings.Contains(check.Summary, "time budget") {
		t.Fatalf("check = %+v, %v; want a failure naming the time budget", check, ok)
	}
	t.Logf("opened and reported in %s", time.Since(start))
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(n, "alice", forge.ReviewApproved, head))
	w.mustNotMerge(n, "a render over its time budget")
}
