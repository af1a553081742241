package ratelimit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
)

// fakeClock advances only when someone sleeps.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFake() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return nil
}

// times runs n writes one after the other and returns when each ran,
// relative to the start.
func times(t *testing.T, s *Scheduler, c *fakeClock, n int) []time.Duration {
	t.Helper()
	start := c.Now()
	var out []time.Duration
	for i := 0; i < n; i++ {
		if err := s.Do(context.Background(), Bulk, func(context.Context) error {
			out = append(out, c.Now().Sub(start))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestPerMinuteAndPerHour(t *testing.T) {
	t.Parallel()
	c := newFake()
	s := New(Limits{PerMinute: 80, PerHour: 500}, c)
	got := times(t, s, c, 501)
	if got[79] != 0 || got[80] != time.Minute {
		t.Errorf("80th write at %v, 81st at %v; want 0 and 1m", got[79], got[80])
	}
	if got[499] >= time.Hour || got[500] < time.Hour {
		t.Errorf("500th write at %v, 501st at %v; want the 501st an hour after the first", got[499], got[500])
	}
}

func TestMinGap(t *testing.T) {
	t.Parallel()
	c := newFake()
	s := New(GitHubSecondary, c)
	got := times(t, s, c, 3)
	if got[0] != 0 || got[1] != time.Second || got[2] != 2*time.Second {
		t.Errorf("writes at %v, want a second apart", got)
	}
}

func TestRetryAfterPausesTheIdentity(t *testing.T) {
	t.Parallel()
	c := newFake()
	s := New(Limits{}, c)
	start := c.Now()
	var attempts []time.Duration
	err := s.Do(context.Background(), Interactive, func(context.Context) error {
		attempts = append(attempts, c.Now().Sub(start))
		if len(attempts) == 1 {
			return &forge.RateLimitError{RetryAt: c.Now().Add(30 * time.Second), Reason: "secondary rate limit"}
		}
		return nil
	})
	if err != nil || len(attempts) != 2 || attempts[1] < 30*time.Second {
		t.Fatalf("attempts %v, err %v; want a retry 30s later", attempts, err)
	}
	// The pause held for every later write too.
	if st := s.Stats(); st.RateLimited != 1 || st.Retries != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestTransientBackoff(t *testing.T) {
	t.Parallel()
	c := newFake()
	s := New(Limits{MaxAttempts: 3, BaseBackoff: time.Second}, c)
	calls := 0
	err := s.Do(context.Background(), Bulk, func(context.Context) error {
		calls++
		if calls < 3 {
			return &TransientError{Err: errors.New("502 bad gateway")}
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("calls %d err %v", calls, err)
	}
	if elapsed := c.Now().Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); elapsed < 1500*time.Millisecond || elapsed > 3*time.Second {
		t.Errorf("backoff total %v, want between 1.5s and 3s (1s then 2s, jittered to half)", elapsed)
	}
	calls = 0
	err = s.Do(context.Background(), Bulk, func(context.Context) error {
		calls++
		return &TransientError{Err: errors.New("timeout")}
	})
	if calls != 3 || err == nil {
		t.Errorf("gave up after %d calls with %v, want 3 and the error", calls, err)
	}
	permanent := errors.New("422 unprocessable")
	calls = 0
	if err := s.Do(context.Background(), Bulk, func(context.Context) error { calls++; return permanent }); !errors.Is(err, permanent) || calls != 1 {
		t.Errorf("permanent error retried: %d calls, %v", calls, err)
	}
}

func TestInteractiveGoesFirst(t *testing.T) {
	t.Parallel()
	s := New(Limits{}, nil)
	hold := make(chan struct{})
	var mu sync.Mutex
	var order []string
	record := func(name string) func(context.Context) error {
		return func(context.Context) error {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return nil
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.Do(context.Background(), Bulk, func(context.Context) error { <-hold; return nil })
	}()
	// waitQueued waits until n writes are queued behind the one in flight.
	waitQueued := func(n int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			s.mu.Lock()
			queued, busy := s.waiting.Len(), s.busy
			s.mu.Unlock()
			if busy && queued == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d writes queued (busy %v), want %d", queued, busy, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitQueued(0)
	for i, name := range []string{"bulk-1", "bulk-2", "bulk-3"} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Do(context.Background(), Bulk, record(name)) }()
		waitQueued(i + 1) // arrival order is the order they queue in
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = s.Do(context.Background(), Interactive, record("command")) }()
	waitQueued(4)
	close(hold)
	wg.Wait()
	if len(order) != 4 || order[0] != "command" || order[1] != "bulk-1" || order[3] != "bulk-3" {
		t.Errorf("order %v, want the command first, then the bulk writes in arrival order", order)
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	t.Parallel()
	c := newFake()
	s := New(Limits{}, c)
	_ = s.Do(context.Background(), Bulk, func(context.Context) error {
		return &forge.RateLimitError{RetryAt: c.Now().Add(time.Hour)}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Do(ctx, Bulk, func(context.Context) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if s.waiting.Len() != 0 {
		t.Errorf("a cancelled waiter stayed queued")
	}
}
