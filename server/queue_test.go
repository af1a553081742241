package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
)

// recorder is a Handler that notes what it was asked to do, and holds
// every call while gate is closed.
type recorder struct {
	gate chan struct{}
	mu   sync.Mutex
	log  []string
}

func (h *recorder) note(s string) {
	<-h.gate
	h.mu.Lock()
	h.log = append(h.log, s)
	h.mu.Unlock()
}

func (h *recorder) Handle(_ context.Context, ev forge.Event) (bot.Outcome, error) {
	h.note("event " + ev.Repo.FullName + " " + ev.Comment.Body)
	return bot.Outcome{}, nil
}

func (h *recorder) Reconcile(_ context.Context, r forge.Repo) (bot.Outcome, error) {
	h.note("resync " + r.FullName)
	return bot.Outcome{}, nil
}

// startServer runs s behind an HTTP server for the test's duration.
func startServer(t testing.TB, s *Server) string {
	t.Helper()
	return startRouter(t, s, s.Router())
}

// startRouter runs s, serving h (s's router, wrapped) over HTTP.
func startRouter(t testing.TB, s *Server, h http.Handler) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { s.Run(ctx); close(stopped) }()
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); cancel(); <-stopped })
	return hs.URL
}

// commentDelivery is a signed issue_comment delivery on repo's PR #1.
func commentDelivery(t testing.TB, url, repo, id, text string) int {
	t.Helper()
	body := []byte(fmt.Sprintf(`{"action":"created","issue":{"number":1,"pull_request":{"url":"x"}},"comment":{"id":%d,"body":%q,"user":{"login":"alice","type":"User"}},"repository":{"full_name":%q,"name":"r","owner":{"login":"acme"},"default_branch":"main"},"sender":{"login":"alice","type":"User"}}`,
		len(id), text, repo))
	mac := hmac.New(sha256.New, []byte(hookSecret))
	mac.Write(body)
	req, _ := http.NewRequest("POST", url+"/webhooks/github", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "issue_comment")
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func githubParser(r *http.Request) (forge.Event, error) {
	return github.ParseWebhook(r, []byte(hookSecret), 25<<20)
}

// TestResyncNeverRefusesWebhooks: a resync over many repositories, every
// few milliseconds, while the one worker is stuck, takes no room from
// webhooks; the queue's bound counts distinct repositories with webhook
// work (a second comment on a waiting repository merges, a third
// repository is refused), and the webhooks go before the resync's work.
func TestResyncNeverRefusesWebhooks(t *testing.T) {
	t.Parallel()
	h := &recorder{gate: make(chan struct{})}
	var repos []forge.Repo
	for i := 0; i < 200; i++ {
		repos = append(repos, forge.Repo{Forge: forge.GitHub, FullName: fmt.Sprintf("acme/r%d", i)})
	}
	s := New(Options{Handler: h, Workers: 1, QueueSize: 2, ResyncInterval: 5 * time.Millisecond,
		Repos:   func(context.Context) ([]forge.Repo, error) { return repos, nil },
		Parsers: map[string]WebhookParser{forge.GitHub: githubParser}})
	url := startServer(t, s)
	time.Sleep(50 * time.Millisecond) // several resyncs; the worker holds the first item
	for i, c := range []struct {
		repo, text string
		want       int
	}{
		{"acme/web-1", "one", http.StatusAccepted},
		{"acme/web-2", "two", http.StatusAccepted},
		{"acme/web-1", "three", http.StatusAccepted}, // merges into web-1's item
		{"acme/web-3", "four", http.StatusServiceUnavailable},
	} {
		if st := commentDelivery(t, url, c.repo, fmt.Sprint("d", i), c.text); st != c.want {
			t.Errorf("delivery %d (%s): HTTP %d, want %d", i, c.repo, st, c.want)
		}
	}
	if st := s.queue.Stats(); st.Waiting[0] > len(repos) {
		t.Errorf("%d resync items for %d repositories: copies were queued", st.Waiting[0], len(repos))
	}
	close(h.gate)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		h.mu.Lock()
		n := len(h.log)
		h.mu.Unlock()
		if n >= 4 || ctx.Err() != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// The first item was taken before any webhook arrived; then people.
	got := strings.Join(h.log[1:4], "; ")
	if got != "event acme/web-1 one; event acme/web-1 three; event acme/web-2 two" {
		t.Errorf("after the running item: %s; want web-1's two comments, then web-2's, before any resync", got)
	}
	refused := metricValue(t, s, "kptbot_webhooks_refused_total")
	if refused != "1" {
		t.Errorf("refused webhooks metric %s, want 1", refused)
	}
}

// metricValue scrapes one unlabelled metric from the server.
func metricValue(t *testing.T, s *Server, name string) string {
	t.Helper()
	rw := httptest.NewRecorder()
	s.Router().ServeHTTP(rw, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rw.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// panicky is the bot with a bug that crashes the first comments.
type panicky struct {
	*bot.Bot
	left  atomic.Int32
	calls atomic.Int32
}

func (p *panicky) Handle(ctx context.Context, ev forge.Event) (bot.Outcome, error) {
	if ev.Kind == forge.EventCommentCreated {
		p.calls.Add(1)
		if p.left.Add(-1) >= 0 {
			var m map[string]int
			m["boom"]++ // a nil-map write: a real runtime panic
		}
	}
	return p.Bot.Handle(ctx, ev)
}

// TestPanicInWorkIsRecoveredReportedAndRetried: a comment whose handling
// panics does not take the server down; the person is told on the PR
// (without the crash's details), the comment is handled on the retry,
// and the server keeps serving.
func TestPanicInWorkIsRecoveredReportedAndRetried(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	n, _ := w.openHumanDraft("dana")
	h := &panicky{Bot: w.nodes[0].bot}
	h.left.Store(1)
	s := New(Options{Handler: h, Workers: 1, RetryBackoff: 10 * time.Millisecond,
		Parsers: map[string]WebhookParser{forge.GitHub: githubParser}})
	url := startServer(t, s)
	body := w.commentPayload(n, "dana", "/kptbot propose")
	mac := hmac.New(sha256.New, []byte(hookSecret))
	mac.Write(body)
	req, _ := http.NewRequest("POST", url+"/webhooks/github", bytes.NewReader(body))
	req.Header.Set("X-GitHub-Event", "issue_comment")
	req.Header.Set("X-GitHub-Delivery", "boom-1")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("delivery: %v %v", resp, err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if h.calls.Load() != 2 {
		t.Errorf("the comment was handled %d times, want 2 (the panic, the retry)", h.calls.Load())
	}
	if c := w.change(n); c.Draft {
		t.Error("the retried /kptbot propose did not mark the PR ready")
	}
	client, _ := github.NewClient(nil, w.gh.URL)
	comments, err := client.ListComments(context.Background(), w.repo, n)
	if err != nil {
		t.Fatal(err)
	}
	told := false
	for _, c := range comments {
		if strings.Contains(c.Body, "internal error") && strings.Contains(c.Body, "try again") {
			told = true
			if strings.Contains(c.Body, "nil map") || strings.Contains(c.Body, "goroutine") {
				t.Errorf("the crash's details reached the PR: %q", c.Body)
			}
		}
	}
	if !told {
		t.Errorf("nobody was told on the PR: %+v", comments)
	}
	if resp, err := http.Get(url + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the server stopped serving: %v %v", resp, err)
	}
}
