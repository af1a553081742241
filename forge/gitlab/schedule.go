package gitlab

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

// classify reads GitLab's signals from a write's answer: 429 is a rate
// limit until Retry-After (or RateLimit-Reset), 5xx is transient.
func classify(resp *http.Response, now time.Time) error {
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return &forge.RateLimitError{RetryAt: retryAt(resp.Header, now), Reason: "GitLab rate limit"}
	case resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented:
		return &ratelimit.TransientError{Err: fmt.Errorf("GitLab answered %s", resp.Status)}
	}
	return nil
}

// retryAt is when a rate-limited request may be retried: Retry-After
// (seconds or an HTTP date), else RateLimit-Reset (Unix seconds), else a
// minute from now, GitLab's rate-limit window.
func retryAt(h http.Header, now time.Time) time.Time {
	if at, ok := ratelimit.RetryAfter(h, now); ok {
		return at
	}
	if s := h.Get("RateLimit-Reset"); s != "" {
		if unix, err := strconv.ParseInt(s, 10, 64); err == nil && unix > 0 {
			return time.Unix(unix, 0)
		}
	}
	return now.Add(time.Minute)
}

// retryReads is client-go's retry policy for this adapter: GETs that failed
// with a 5xx are retried; writes never (the scheduler already did), and a
// 429 is never waited out here but returned as a RateLimitError.
func retryReads(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil || resp == nil || resp.Request == nil {
		return false, nil
	}
	if resp.Request.Method != http.MethodGet && resp.Request.Method != http.MethodHead {
		return false, nil
	}
	return resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented, nil
}
