package ratelimit

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
)

// skipClock is real time plus what the scheduler slept: retries need no
// real waiting.
type skipClock struct {
	mu    sync.Mutex
	slept time.Duration
}

func (c *skipClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.slept)
}

func (c *skipClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept += d
	return nil
}

// onlyReader hides bytes.Reader's type, so http.NewRequest sets no
// GetBody: the transport must keep its own copy.
type onlyReader struct{ io.Reader }

func TestTransportReplaysAWriteBodyIntact(t *testing.T) {
	t.Parallel()
	const payload = `{"body":"a comment long enough to matter ` + "\u00e9" + `"}`
	for _, tc := range []struct {
		name string
		body func() io.Reader
	}{
		{"with GetBody", func() io.Reader { return bytes.NewReader([]byte(payload)) }},
		{"without GetBody", func() io.Reader { return onlyReader{strings.NewReader(payload)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got []string
			var lengths []int64
			answers := []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusCreated}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, err := io.ReadAll(r.Body)
				if err != nil {
					t.Errorf("reading the request body: %v", err)
				}
				mu.Lock()
				code := answers[len(got)]
				got = append(got, string(b))
				lengths = append(lengths, r.ContentLength)
				mu.Unlock()
				w.Header().Set("Retry-After", "30")
				w.WriteHeader(code)
			}))
			t.Cleanup(srv.Close)
			clock := &skipClock{}
			s := New(Limits{PerMinute: 100, PerHour: 1000, MaxAttempts: 5}, clock)
			classify := func(r *http.Response) error {
				switch {
				case r.StatusCode == http.StatusTooManyRequests:
					at, _ := RetryAfter(r.Header, clock.Now())
					return &forge.RateLimitError{RetryAt: at, Reason: "test"}
				case r.StatusCode >= 500:
					return &TransientError{Err: io.ErrUnexpectedEOF}
				}
				return nil
			}
			c := &http.Client{Transport: Transport(http.DefaultTransport, s, classify)}
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/notes", tc.body())
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("final status %d, want 201 after a 429 and a 502", resp.StatusCode)
			}
			if len(got) != 3 {
				t.Fatalf("%d attempts, want 3", len(got))
			}
			for i, b := range got {
				if b != payload {
					t.Errorf("attempt %d sent body %q, want %q", i+1, b, payload)
				}
				if lengths[i] != int64(len(payload)) {
					t.Errorf("attempt %d sent Content-Length %d, want %d", i+1, lengths[i], len(payload))
				}
			}
			if clock.slept < 30*time.Second {
				t.Errorf("slept %v, want at least Retry-After's 30s", clock.slept)
			}
		})
	}
}

func TestTransportPassesReadsStraightThrough(t *testing.T) {
	t.Parallel()
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(srv.Close)
	s := New(Limits{PerMinute: 100, PerHour: 1000}, &skipClock{})
	c := &http.Client{Transport: Transport(http.DefaultTransport, s, func(*http.Response) error {
		return &TransientError{Err: io.ErrUnexpectedEOF}
	})}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if calls != 1 || s.Stats().Retries != 0 {
		t.Errorf("a GET was sent %d times (%d retries), want once: reads are not scheduled", calls, s.Stats().Retries)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		header string
		want   time.Time
		ok     bool
	}{
		{"60", now.Add(time.Minute), true},
		{"0", now, true},
		{"Fri, 02 Jan 2026 03:10:00 GMT", time.Date(2026, 1, 2, 3, 10, 0, 0, time.UTC), true},
		{"", time.Time{}, false},
		{"-5", time.Time{}, false},
		{"soon", time.Time{}, false},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("Retry-After", tc.header)
		}
		got, ok := RetryAfter(h, now)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("RetryAfter(%q) = %v, %v; want %v, %v", tc.header, got, ok, tc.want, tc.ok)
		}
	}
}
