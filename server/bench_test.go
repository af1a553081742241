package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/workqueue"
)

// benchPayload is a real GitHub payload with the repository (and comment
// body) set.
func benchPayload(b testing.TB, file string, set map[string]any) []byte {
	raw, err := os.ReadFile("../testdata/webhooks/github/" + file)
	if err != nil {
		b.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		b.Fatal(err)
	}
	for k, v := range set {
		setPath(m, strings.Split(k, "."), v)
	}
	out, _ := json.Marshal(m)
	return out
}

func commentOn(b testing.TB, repo forge.Repo, body string) []byte {
	name := repo.FullName[strings.LastIndex(repo.FullName, "/")+1:]
	return benchPayload(b, "derived/issue_comment.created.on-pull-request.payload.json", map[string]any{
		"repository.full_name": repo.FullName, "repository.name": name, "repository.owner.login": "acme", "repository.default_branch": "main",
		"comment.body": body, "comment.user.login": "alice", "sender.login": "alice",
	})
}

// watchComments is the bot, noting when a comment's handling starts and
// how many bulk items had been handed out by then.
type watchComments struct {
	*bot.Bot
	s       *Server
	started chan int // bulk items still waiting when a comment starts
}

func (w *watchComments) Handle(ctx context.Context, ev forge.Event) (bot.Outcome, error) {
	if ev.Kind == forge.EventCommentCreated {
		w.started <- w.s.queue.Stats().Waiting[workqueue.Bulk]
	}
	return w.Bot.Handle(ctx, ev)
}

// BenchmarkCommandDuringFanOut: a tag push fans basens out to 1,000
// followers (1,000 bulk items); while they are worked, a person comments
// a command on an unrelated repository, five times. Reported: the most
// bulk items handed out between a comment's acceptance and the start of
// its handling (0: it went before every waiting item; what delays it is
// only the items the workers were already on), the longest delay, and
// the mean time of one fan-out item.
func BenchmarkCommandDuringFanOut(b *testing.B) {
	const n, workers = 1000, 4
	for i := 0; i < b.N; i++ {
		fl := newFleet(b, n)
		if err := fl.bot.RefreshIndex(context.Background()); err != nil {
			b.Fatal(err)
		}
		app := forge.Repo{Forge: forge.GitHub, FullName: "acme/app", DefaultBranch: "main"}
		fl.fake.Seed(app, "main", map[string][]byte{"README.md": []byte("app\n")})
		w := &watchComments{Bot: fl.bot, started: make(chan int, 10)}
		s := New(Options{Handler: w, Workers: workers, Parsers: map[string]WebhookParser{forge.GitHub: githubParser}})
		w.s = s
		url := startServer(b, s)
		tag := benchPayload(b, "push/tag-created.ghes.payload.json", map[string]any{
			"ref": "refs/tags/basens/v1", "after": strings.Repeat("a", 40), "before": forge.ZeroSHA, "created": true, "deleted": false,
			"repository.full_name": blueprints.FullName, "repository.name": "blueprints", "repository.owner.login": "acme", "sender.login": "alice",
		})
		if st := signedPost(b, url, "push", "tag-1", tag); st != http.StatusAccepted {
			b.Fatalf("tag push: HTTP %d", st)
		}
		for s.queue.Stats().Waiting[workqueue.Bulk] < n/2 { // the fan-out is queued
			time.Sleep(time.Millisecond)
		}
		maxAhead, maxDelay := 0, time.Duration(0)
		for k := 0; k < 5; k++ {
			time.Sleep(500 * time.Millisecond)
			start := time.Now()
			if st := signedPost(b, url, "issue_comment", fmt.Sprint("cmd-", k), commentOn(b, app, "/kptbot help")); st != http.StatusAccepted {
				b.Fatalf("comment: HTTP %d", st)
			}
			before := s.queue.Stats().Waiting[workqueue.Bulk] // once accepted
			after := <-w.started
			maxAhead = max(maxAhead, before-after)
			maxDelay = max(maxDelay, time.Since(start))
		}
		left := s.queue.Stats().Waiting[workqueue.Bulk]
		perItem := meanJobTime(b, s)
		b.Logf("(d) a person's command on an unrelated repository during a %d-follower fan-out, 5 times: at most %d bulk items started ahead of it; "+
			"delayed at most %.1f ms, %.2f of a mean fan-out item (%.1f ms); %d workers; load average %s",
			n, maxAhead, ms(maxDelay), maxDelay.Seconds()/perItem.Seconds(), ms(perItem), workers, loadAverage())
		b.ReportMetric(float64(maxAhead), "bulk-items-started-ahead")
		b.ReportMetric(float64(maxDelay.Microseconds())/1000, "max-command-delay-ms")
		b.ReportMetric(float64(perItem.Microseconds())/1000, "mean-item-ms")
		b.ReportMetric(maxDelay.Seconds()/perItem.Seconds(), "delay/mean-item")
		if left == 0 {
			b.Fatal("the fan-out finished before the comments: nothing was measured")
		}
	}
}

// meanJobTime is the mean duration of the jobs the server ran so far.
func meanJobTime(b *testing.B, s *Server) time.Duration {
	mfs, err := s.reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "kptbot_event_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == "job" && m.GetHistogram().GetSampleCount() > 0 {
					h := m.GetHistogram()
					return time.Duration(h.GetSampleSum() / float64(h.GetSampleCount()) * float64(time.Second))
				}
			}
		}
	}
	b.Fatal("no job durations")
	return 0
}

// benchWorkers is the intake benchmark's worker count: $KPTBOT_BENCH_WORKERS,
// default 4 (the server's default).
func benchWorkers() int {
	if n, err := strconv.Atoi(os.Getenv("KPTBOT_BENCH_WORKERS")); err == nil && n > 0 {
		return n
	}
	return 4
}
