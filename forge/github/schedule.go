package github

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/ratelimit"
)

// WithPriority is ratelimit.WithPriority, which every adapter reads: a
// person's command (ratelimit.Interactive) goes before a fan-out update
// (ratelimit.Bulk, the default).
func WithPriority(ctx context.Context, p ratelimit.Priority) context.Context {
	return ratelimit.WithPriority(ctx, p)
}

// NewScheduledTransport sends every write (any method but GET and HEAD)
// through s, the one scheduler of this identity: writes wait for GitHub's
// secondary-limit budget, a 403/429 with Retry-After or an exhausted
// primary limit pauses the identity until GitHub's retry time, and 5xx
// answers are retried with backoff. Reads pass straight through.
func NewScheduledTransport(next http.RoundTripper, s *ratelimit.Scheduler) http.RoundTripper {
	return &scheduledTransport{next: next, sched: s}
}

type scheduledTransport struct {
	next  http.RoundTripper
	sched *ratelimit.Scheduler
}

func (t *scheduledTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return t.next.RoundTrip(req)
	}
	prio := ratelimit.PriorityFrom(req.Context())
	var last *http.Response
	attempt := 0
	err := t.sched.Do(req.Context(), prio, func(ctx context.Context) error {
		attempt++
		r := req
		if attempt > 1 {
			if req.GetBody == nil && req.Body != nil {
				return nil // the body cannot be replayed: give the caller the last answer
			}
			r = req.Clone(ctx)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return err
				}
				r.Body = body
			}
		}
		if last != nil {
			io.Copy(io.Discard, last.Body)
			last.Body.Close()
			last = nil
		}
		resp, err := t.next.RoundTrip(r)
		if err != nil {
			return err
		}
		last = resp
		return classify(resp)
	})
	if last != nil {
		// The final answer, successful or not, goes to go-github, which
		// turns errors into its own types (and apiError into sentinels).
		return last, nil
	}
	return nil, err
}

// classify reads GitHub's rate-limit signals from a response: Retry-After
// on 403/429 (secondary limits), x-ratelimit-remaining 0 with
// x-ratelimit-reset (primary limit), and 5xx as transient.
func classify(resp *http.Response) error {
	switch {
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests:
		if s := resp.Header.Get("Retry-After"); s != "" {
			if secs, err := strconv.Atoi(s); err == nil {
				return &forge.RateLimitError{RetryAt: time.Now().Add(time.Duration(secs) * time.Second), Reason: "GitHub secondary rate limit"}
			}
		}
		if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
			if reset, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
				return &forge.RateLimitError{RetryAt: time.Unix(reset, 0), Reason: "GitHub primary rate limit"}
			}
		}
	case resp.StatusCode >= 500:
		return &ratelimit.TransientError{Err: fmt.Errorf("GitHub answered %s", resp.Status)}
	}
	return nil
}
