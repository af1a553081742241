package server

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/workqueue"
)

// failureReporter is a Handler that can tell the people on a change that
// handling their event failed (the details go to the log only).
type failureReporter interface {
	ReportFailure(ctx context.Context, ev forge.Event, retrying bool) error
}

// errPanicked marks work that panicked: it is retried with backoff.
var errPanicked = errors.New("panicked")

func (s *Server) worker(ctx context.Context) {
	defer s.wg.Done()
	if s.opts.LowerWorkerPriority {
		lowerWorkerPriority()
	}
	ctx = bot.WithScheduler(ctx, s)
	for {
		it, err := s.queue.Get(ctx)
		if err != nil {
			return
		}
		s.process(ctx, it)
	}
}

// process runs an item's hints in arrival order, then the full reconcile
// when the item is dirty. A hint that panics is recovered: it and the
// hints after it are retried with backoff, the earlier ones are done.
func (s *Server) process(ctx context.Context, it *workqueue.Item) {
	s.mu.Lock()
	draining := s.draining
	s.mu.Unlock()
	failed := false
	for i, h := range it.Hints {
		err := s.run(ctx, h.Value)
		if errors.Is(err, errPanicked) {
			it.Hints = it.Hints[i:]
			s.retryOrDrop(ctx, it, h.Value)
			return
		}
		failed = failed || err != nil
	}
	// A resync at shutdown is left to the next process's resync.
	if it.Dirty && !draining {
		r, _ := it.Subject.(forge.Repo)
		err := s.run(ctx, r)
		if errors.Is(err, errPanicked) {
			it.Hints = nil
			s.retryOrDrop(ctx, it, r)
			return
		}
		failed = failed || err != nil
	}
	result := "ok"
	if failed {
		result = "error"
	}
	s.metrics.items.WithLabelValues(result).Inc()
	s.queue.Done(it)
}

// run handles one hint (an event, a job) or, given a repository, the
// resync's reconcile; a panic becomes errPanicked.
func (s *Server) run(ctx context.Context, v any) (err error) {
	kind, repo, delivery := "", "", ""
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("work panicked", "kind", kind, "repo", repo, "delivery", delivery, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("%s on %s: %w: %v", kind, repo, errPanicked, p)
		}
		result := "ok"
		switch {
		case errors.Is(err, errPanicked):
			result = "panic"
		case err != nil:
			result = "error"
			s.log.Error("work failed", "kind", kind, "repo", repo, "delivery", delivery, "err", err)
		}
		s.metrics.duration.WithLabelValues(kind).Observe(time.Since(start).Seconds())
		s.metrics.handled.WithLabelValues(kind, result).Inc()
	}()
	switch v := v.(type) {
	case forge.Event:
		kind, repo, delivery = string(v.Kind), v.Repo.FullName, v.DeliveryID
		_, err = s.opts.Handler.Handle(ctx, v)
	case bot.Job:
		kind = "job"
		err = v.Run(ctx)
	case forge.Repo:
		kind, repo = "resync", v.FullName
		_, err = s.opts.Handler.Reconcile(ctx, v)
	default:
		kind = "unknown"
		err = fmt.Errorf("unknown work %T", v)
	}
	return err
}

// retryOrDrop queues a panicked item again after a backoff that doubles
// per attempt, until MaxAttempts; the change an event was about, if any,
// is told either way.
func (s *Server) retryOrDrop(ctx context.Context, it *workqueue.Item, failed any) {
	retrying := it.Attempt+1 < s.opts.MaxAttempts
	if ev, ok := failed.(forge.Event); ok && ev.Change != nil {
		if r, ok := s.opts.Handler.(failureReporter); ok {
			if err := s.safeReport(ctx, r, ev, retrying); err != nil {
				s.log.Error("reporting a failure on the change", "repo", ev.Repo.FullName, "change", ev.Change.Number, "err", err)
			}
		}
	}
	if !retrying {
		s.log.Error("work dropped after repeated panics", "key", it.Key, "attempts", it.Attempt+1)
		s.metrics.items.WithLabelValues("dropped").Inc()
		s.queue.Done(it)
		return
	}
	delay := s.opts.RetryBackoff << it.Attempt
	if delay > time.Minute {
		delay = time.Minute
	}
	s.metrics.items.WithLabelValues("retried").Inc()
	s.queue.Retry(it, delay)
}

// safeReport reports a failure; reporting must not take the worker down
// either.
func (s *Server) safeReport(ctx context.Context, r failureReporter, ev forge.Event, retrying bool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errPanicked, p)
		}
	}()
	return r.ReportFailure(ctx, ev, retrying)
}
