package github

import (
	"context"
	"fmt"
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
	return ratelimit.Transport(next, s, classify)
}

// classify reads GitHub's rate-limit signals from a response: Retry-After
// on 403/429 (secondary limits), x-ratelimit-remaining 0 with
// x-ratelimit-reset (primary limit), and 5xx as transient.
func classify(resp *http.Response) error {
	switch {
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests:
		if at, ok := ratelimit.RetryAfter(resp.Header, time.Now()); ok {
			return &forge.RateLimitError{RetryAt: at, Reason: "GitHub secondary rate limit"}
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
