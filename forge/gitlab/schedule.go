package gitlab

import (
	"bytes"
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

// scheduledTransport sends every write (any method but GET and HEAD)
// through the identity's scheduler: writes keep to its Limits, a 429 pauses
// the whole identity until GitLab's Retry-After / RateLimit-Reset and is
// retried, and 5xx answers are retried with backoff. Reads pass through.
type scheduledTransport struct {
	next  http.RoundTripper
	sched *ratelimit.Scheduler
	now   func() time.Time
}

func (t *scheduledTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return t.next.RoundTrip(req)
	}
	// Retries resend the body, so it is read once up front (writes are
	// small JSON documents).
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading the %s %s body: %w", req.Method, req.URL.Path, err)
		}
		body = b
	}
	prio := ratelimit.PriorityFrom(req.Context())
	var last *http.Response
	err := t.sched.Do(req.Context(), prio, func(ctx context.Context) error {
		if last != nil {
			io.Copy(io.Discard, last.Body)
			last.Body.Close()
			last = nil
		}
		r := req.Clone(ctx)
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		resp, err := t.next.RoundTrip(r)
		if err != nil {
			// Not retried: the write may have reached GitLab.
			return err
		}
		last = resp
		return classify(resp, t.now())
	})
	if last != nil {
		// The final answer, successful or not, goes to client-go, which
		// turns errors into its own types (and apiError into sentinels).
		return last, nil
	}
	return nil, err
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
	if s := h.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil && secs >= 0 {
			return now.Add(time.Duration(secs) * time.Second)
		}
		if t, err := http.ParseTime(s); err == nil {
			return t
		}
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
