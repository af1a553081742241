package ratelimit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Classifier reads a forge's answer to a write: a *forge.RateLimitError
// pauses the identity until the forge's retry time, a *TransientError is
// retried with backoff, nil (any other answer) goes back to the caller.
type Classifier func(*http.Response) error

// Transport sends every write (any method but GET and HEAD) through s, the
// one scheduler of an identity, so writes keep to its Limits, rate limits
// pause the whole identity and transient answers are retried; classify
// says which answer is which. Reads pass straight through.
//
// A retried write sends the same body again: from req.GetBody when the
// request has one, else from a copy read once before the first attempt
// (REST writes are small JSON documents). The final answer, successful or
// not, goes back to the API client, which turns errors into its own types.
// A transport error is never retried: the write may have reached the forge.
func Transport(next http.RoundTripper, s *Scheduler, classify Classifier) http.RoundTripper {
	return &transport{next: next, sched: s, classify: classify}
}

type transport struct {
	next     http.RoundTripper
	sched    *Scheduler
	classify Classifier
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return t.next.RoundTrip(req)
	}
	body, err := replayable(req)
	if err != nil {
		return nil, err
	}
	var last *http.Response
	err = t.sched.Do(req.Context(), PriorityFrom(req.Context()), func(ctx context.Context) error {
		if last != nil {
			io.Copy(io.Discard, last.Body)
			last.Body.Close()
			last = nil
		}
		r := req.Clone(ctx)
		if body != nil {
			b, err := body()
			if err != nil {
				return fmt.Errorf("replaying the %s %s body: %w", req.Method, req.URL.Path, err)
			}
			r.Body = b
		}
		resp, err := t.next.RoundTrip(r)
		if err != nil {
			return err
		}
		last = resp
		return t.classify(resp)
	})
	if last != nil {
		return last, nil
	}
	return nil, err
}

// replayable returns what gives each attempt a fresh copy of req's body
// (nil when it has none).
func replayable(req *http.Request) (func() (io.ReadCloser, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		// Every attempt sends a copy; the original is closed, as a
		// RoundTripper must.
		req.Body.Close()
		return req.GetBody, nil
	}
	data, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the %s %s body: %w", req.Method, req.URL.Path, err)
	}
	req.ContentLength = int64(len(data))
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, nil
}

// RetryAfter reads a Retry-After header, in seconds or as an HTTP date
// (both forges' forms), as the time to retry at.
func RetryAfter(h http.Header, now time.Time) (time.Time, bool) {
	s := h.Get("Retry-After")
	if s == "" {
		return time.Time{}, false
	}
	if secs, err := strconv.Atoi(s); err == nil && secs >= 0 {
		return now.Add(time.Duration(secs) * time.Second), true
	}
	if t, err := http.ParseTime(s); err == nil {
		return t, true
	}
	return time.Time{}, false
}
