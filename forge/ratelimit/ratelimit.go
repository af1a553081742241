// Package ratelimit schedules one identity's writes to a forge: GitHub's
// secondary limits (content-creating requests per minute and per hour, a
// gap between writes), Retry-After / rate-limit reset answers, GitLab's
// 429s and transient failures (5xx, timeouts) all go through one Scheduler,
// which spaces requests, pauses the whole identity when the forge says so,
// retries with jittered exponential backoff, and lets a person's command
// go before a bulk update.
package ratelimit

import (
	"container/heap"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/kptbot/kptbot/forge"
)

// Priority orders waiting writes: higher first.
type Priority int

// Priorities.
const (
	Bulk        Priority = 0  // fan-out updates, resyncs
	Interactive Priority = 10 // a person's command or review
)

// Limits are one identity's budget.
type Limits struct {
	PerMinute int           // content-creating requests per minute (GitHub: 80)
	PerHour   int           // per hour (GitHub: 500)
	MinGap    time.Duration // at least this much between two writes
	// MaxAttempts bounds retries of transient failures (default 5).
	MaxAttempts int
	// BaseBackoff is the first retry delay (default 1s), doubled each time,
	// with jitter, capped at MaxBackoff (default 1 minute).
	BaseBackoff, MaxBackoff time.Duration
}

// GitHubSecondary are GitHub's documented secondary limits for
// content-creating requests.
var GitHubSecondary = Limits{PerMinute: 80, PerHour: 500, MinGap: time.Second}

// Clock is time, replaceable in tests.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
}

// WallClock is the real Clock.
type WallClock struct{}

// Now is time.Now.
func (WallClock) Now() time.Time { return time.Now() }

// Sleep waits for d or until ctx is done.
func (WallClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// TransientError marks a failure worth retrying (5xx, timeouts).
type TransientError struct{ Err error }

func (e *TransientError) Error() string { return "transient: " + e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }

// Stats are what the scheduler has done, for metrics.
type Stats struct {
	Requests, Retries, RateLimited int
	Waited                         time.Duration
}

// Scheduler runs one identity's writes within its limits. It is safe for
// concurrent use.
type Scheduler struct {
	limits Limits
	clock  Clock
	rng    *rand.Rand

	mu       sync.Mutex
	sent     []time.Time // send times within the last hour
	pausedTo time.Time   // a forge-imposed pause for the whole identity
	waiting  waitQueue
	busy     bool // a write is being sent
	seq      int
	stats    Stats
}

// New returns a Scheduler for limits; clock may be nil for real time.
func New(limits Limits, clock Clock) *Scheduler {
	if limits.MaxAttempts == 0 {
		limits.MaxAttempts = 5
	}
	if limits.BaseBackoff == 0 {
		limits.BaseBackoff = time.Second
	}
	if limits.MaxBackoff == 0 {
		limits.MaxBackoff = time.Minute
	}
	if clock == nil {
		clock = WallClock{}
	}
	return &Scheduler{limits: limits, clock: clock, rng: rand.New(rand.NewPCG(1, 2))}
}

// Stats returns a snapshot of the counters.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Do runs write within the limits: it waits its turn (by priority, then
// arrival), retries transient failures with backoff, and on a
// *forge.RateLimitError pauses the identity until the forge's retry time
// and tries again. It returns write's last error.
func (s *Scheduler) Do(ctx context.Context, prio Priority, write func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		if err := s.acquire(ctx, prio); err != nil {
			return err
		}
		err := write(ctx)
		s.release()
		var rl *forge.RateLimitError
		var tr *TransientError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &rl):
			s.mu.Lock()
			s.stats.RateLimited++
			if rl.RetryAt.After(s.pausedTo) {
				s.pausedTo = rl.RetryAt
			}
			s.mu.Unlock()
			if attempt >= s.limits.MaxAttempts {
				return err
			}
		case errors.As(err, &tr):
			if attempt >= s.limits.MaxAttempts {
				return err
			}
			if err := s.clock.Sleep(ctx, s.backoff(attempt)); err != nil {
				return err
			}
		default:
			return err
		}
		s.mu.Lock()
		s.stats.Retries++
		s.mu.Unlock()
	}
}

func (s *Scheduler) backoff(attempt int) time.Duration {
	d := s.limits.BaseBackoff << (attempt - 1)
	if d > s.limits.MaxBackoff || d <= 0 {
		d = s.limits.MaxBackoff
	}
	s.mu.Lock()
	j := time.Duration(s.rng.Int64N(int64(d)/2 + 1))
	s.mu.Unlock()
	return d/2 + j // in [d/2, d]
}

// acquire waits until this caller is first in line and the limits allow
// a write, then marks the write as sent.
func (s *Scheduler) acquire(ctx context.Context, prio Priority) error {
	s.mu.Lock()
	s.seq++
	w := &waiter{prio: prio, seq: s.seq}
	heap.Push(&s.waiting, w)
	for {
		if !s.busy && s.waiting[0] == w {
			wait := s.waitLocked(s.clock.Now())
			if wait <= 0 {
				heap.Pop(&s.waiting)
				s.busy = true
				now := s.clock.Now()
				s.sent = append(s.sent, now)
				s.stats.Requests++
				s.mu.Unlock()
				return nil
			}
			s.stats.Waited += wait
			s.mu.Unlock()
			err := s.clock.Sleep(ctx, wait)
			s.mu.Lock()
			if err != nil {
				heap.Remove(&s.waiting, w.index)
				s.mu.Unlock()
				return err
			}
			continue
		}
		// Not our turn: poll (cheap; writes are seconds apart).
		s.mu.Unlock()
		if err := s.clock.Sleep(ctx, 5*time.Millisecond); err != nil {
			s.mu.Lock()
			heap.Remove(&s.waiting, w.index)
			s.mu.Unlock()
			return err
		}
		s.mu.Lock()
	}
}

func (s *Scheduler) release() {
	s.mu.Lock()
	s.busy = false
	s.mu.Unlock()
}

// waitLocked is how long the next write must wait at now.
func (s *Scheduler) waitLocked(now time.Time) time.Duration {
	// Forget sends older than an hour.
	keep := s.sent[:0]
	for _, t := range s.sent {
		if now.Sub(t) < time.Hour {
			keep = append(keep, t)
		}
	}
	s.sent = keep
	var wait time.Duration
	if d := s.pausedTo.Sub(now); d > wait {
		wait = d
	}
	if n := len(s.sent); n > 0 && s.limits.MinGap > 0 {
		if d := s.sent[n-1].Add(s.limits.MinGap).Sub(now); d > wait {
			wait = d
		}
	}
	if s.limits.PerHour > 0 && len(s.sent) >= s.limits.PerHour {
		if d := s.sent[len(s.sent)-s.limits.PerHour].Add(time.Hour).Sub(now); d > wait {
			wait = d
		}
	}
	if s.limits.PerMinute > 0 {
		recent := 0
		for _, t := range s.sent {
			if now.Sub(t) < time.Minute {
				recent++
			}
		}
		if recent >= s.limits.PerMinute {
			oldest := s.sent[len(s.sent)-recent]
			if d := oldest.Add(time.Minute).Sub(now); d > wait {
				wait = d
			}
		}
	}
	return wait
}

type waiter struct {
	prio  Priority
	seq   int
	index int
}

// waitQueue is a heap: highest priority first, then first come.
type waitQueue []*waiter

func (q waitQueue) Len() int { return len(q) }
func (q waitQueue) Less(i, j int) bool {
	if q[i].prio != q[j].prio {
		return q[i].prio > q[j].prio
	}
	return q[i].seq < q[j].seq
}
func (q waitQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *waitQueue) Push(x any) {
	w := x.(*waiter)
	w.index = len(*q)
	*q = append(*q, w)
}
func (q *waitQueue) Pop() any {
	old := *q
	w := old[len(old)-1]
	*q = old[:len(old)-1]
	return w
}
