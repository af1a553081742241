package github

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/ratelimit"
)

// stepClock is real time plus whatever the scheduler slept, so retries
// after Retry-After need no real waiting.
type stepClock struct {
	mu     sync.Mutex
	slept  time.Duration
	sleeps []time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.slept)
}

func (c *stepClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept += d
	c.sleeps = append(c.sleeps, d)
	return nil
}

func TestScheduledTransportRetriesRateLimitsAndServerErrors(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	answers := map[string][]int{
		"/repos/acme/site-a/issues/8/comments": {403, 502, 201},
		"/repos/acme/site-a/check-runs":        {422},
	}
	bodies := map[string][]string{}
	srv := httptest.NewServer(loadAPIContract(t).Middleware(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		b := make([]byte, r.ContentLength)
		r.Body.Read(b)
		bodies[r.URL.Path] = append(bodies[r.URL.Path], string(b))
		codes := answers[r.URL.Path]
		code := codes[0]
		if len(codes) > 1 {
			answers[r.URL.Path] = codes[1:]
		}
		w.Header().Set("Content-Type", "application/json")
		switch code {
		case 403:
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(code)
			fmt.Fprint(w, `{"message":"You have exceeded a secondary rate limit."}`)
		case 502:
			w.WriteHeader(code)
			fmt.Fprint(w, `{"message":"Server Error"}`)
		case 422:
			w.WriteHeader(code)
			fmt.Fprint(w, `{"message":"Validation Failed","errors":[{"resource":"CheckRun","code":"custom","message":"No commit found for SHA: x"}]}`)
		default:
			w.WriteHeader(code)
			fmt.Fprint(w, `{"id":501,"body":"hi","user":{"login":"kptbot[bot]","type":"Bot"}}`)
		}
	})))
	t.Cleanup(srv.Close)
	clock := &stepClock{}
	sched := ratelimit.New(ratelimit.Limits{PerMinute: 80, PerHour: 500, MaxAttempts: 5, BaseBackoff: time.Second, MaxBackoff: time.Minute}, clock)
	c, err := NewClient(&http.Client{Transport: NewScheduledTransport(http.DefaultTransport, sched)}, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithPriority(context.Background(), ratelimit.Interactive)
	site := forge.Repo{FullName: "acme/site-a"}
	cm, err := c.Comment(ctx, site, 8, "hi")
	if err != nil || cm.ID != 501 {
		t.Fatalf("Comment after a secondary limit and a 502 = %+v, %v; want it retried to success", cm, err)
	}
	if got := bodies["/repos/acme/site-a/issues/8/comments"]; len(got) != 3 || got[2] != got[0] {
		t.Errorf("request bodies %q: want the same body sent three times", got)
	}
	if clock.slept < 59*time.Second {
		t.Errorf("scheduler waited %v in all, want at least Retry-After's 60s (sleeps %v)", clock.slept, clock.sleeps)
	}
	if st := sched.Stats(); st.RateLimited != 1 || st.Retries != 2 {
		t.Errorf("scheduler stats %+v, want 1 rate limit and 2 retries", st)
	}
	rep := forge.CheckReport{Name: "kptbot/render", HeadSHA: "x", Status: forge.CheckQueued}
	if err := c.ReportCheck(ctx, site, rep); err == nil {
		t.Error("a 422 was not passed back as an error")
	}
	if n := len(bodies["/repos/acme/site-a/check-runs"]); n != 1 {
		t.Errorf("a 422 was sent %d times, want once (not retried)", n)
	}
}
