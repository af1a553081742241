package server

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// publishCounter counts, on the httptest GitHub, the requests that mark
// each step of an approval: the evaluation (listing the reviews), the
// merge, the publish (listing the tags to number the revision) and the
// tag it writes.
type publishCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *publishCounter) observe(_ http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	op := ""
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/reviews"):
		op = "evaluate"
	case r.Method == http.MethodPut && strings.HasSuffix(p, "/merge"):
		op = "merge"
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/tags"):
		op = "publish"
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/git/tags"):
		op = "tag"
	}
	if op != "" {
		c.mu.Lock()
		c.counts[op]++
		c.mu.Unlock()
	}
	return false // GitHub answers as usual
}

func (c *publishCounter) get() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// TestGitHubPublishRunsOnce: one approval is evaluated once and published
// once (one merge, one tag listing, one tag). The bot's own merge makes
// GitHub send a "closed" delivery whose sender is the bot; it arrives
// after the approval's run has published, and again at the other replica
// (a redelivery under a new id): neither evaluates the approvals again,
// reads the tags again, nor writes anything.
func TestGitHubPublishRunsOnce(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 2)
	n, head := w.openHumanDraft("dana")
	w.deliver(0, "issue_comment", w.id(), w.commentPayload(n, "bob", "/kptbot propose"))
	counter := &publishCounter{counts: map[string]int{}}
	w.gh.Intercept(counter.observe)

	w.deliver(0, "pull_request_review", w.id(), w.reviewPayload(n, "alice", head))
	c := w.change(n)
	if !c.Merged {
		t.Fatal("setup: alice's approval did not publish the change")
	}
	closed := w.payload("pull_request/closed.payload.json", map[string]any{
		"number": n, "pull_request.number": n, "pull_request.merged": true, "pull_request.state": "closed",
		"pull_request.merge_commit_sha": c.MergeCommitSHA, "pull_request.user.login": "dana",
		"pull_request.head.ref": "scale", "pull_request.head.sha": head, "pull_request.base.ref": "main",
		"pull_request.head.repo.full_name": w.repo.FullName, "pull_request.base.repo.full_name": w.repo.FullName,
		"sender.login": "kptbot[bot]", "sender.type": "Bot",
	})
	for i := range w.nodes {
		if st := w.deliver(i, "pull_request", w.id(), closed); st != http.StatusAccepted {
			t.Fatalf("closed delivery to replica %d: HTTP %d", i, st)
		}
	}

	want := map[string]int{"evaluate": 1, "merge": 1, "publish": 1, "tag": 1}
	got := counter.get()
	for op, n := range want {
		if got[op] != n {
			t.Errorf("%s ran %d times for one approval, want %d (all: %v)", op, got[op], n, got)
		}
	}
	if tags := w.tags(); len(tags) != 1 || tags[0].Name != "pkgs/ns/v1" || tags[0].SHA != c.MergeCommitSHA {
		t.Errorf("tags = %v, want pkgs/ns/v1 at %s", tags, c.MergeCommitSHA)
	}
}
