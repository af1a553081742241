// Package workqueue is the bot's intake queue: one work item per key (a
// repository), coalescing everything that arrives for a key while its item
// waits, with two priorities so that what people do goes before bulk work.
//
// The rules, which the server relies on:
//   - per key, at most one item waits and one runs; a key's items never
//     run concurrently, and a waiting item of a running key is not handed
//     out until the running one is Done;
//   - work added for a key that already has a waiting item merges into it
//     (its hints are appended, a hint with the same Merge key replaces the
//     older one, Dirty is or-ed, the priority is the higher);
//   - the bound counts distinct keys with waiting Interactive work; Bulk
//     work (resyncs, fan-out) is never refused and never makes Interactive
//     work refused, since it is bounded by the set of keys itself;
//   - Interactive items are handed out before Bulk ones, each in arrival
//     order;
//   - an Interactive item is handed out with its Interactive hints only:
//     bulk work merged into it (a resync's Dirty, a fan-out's jobs) stays
//     behind as the key's Bulk item, in its place by age, so a person's
//     event never waits for the reconcile a resync asked of the same
//     repository, and webhook work is handed out as fast as it is handled.
package workqueue

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"
)

// Priority orders waiting items: Interactive before Bulk.
type Priority int

// Priorities.
const (
	Bulk        Priority = 0 // resyncs, fan-out
	Interactive Priority = 1 // webhook deliveries: what people did
)

// String is the priority's metric label.
func (p Priority) String() string {
	if p == Interactive {
		return "interactive"
	}
	return "bulk"
}

// Errors Add returns.
var (
	// ErrFull is returned when Interactive work would make more distinct
	// keys wait than the capacity allows.
	ErrFull = errors.New("workqueue: full")
	// ErrClosed is returned by Add after Close, and by Get once the queue
	// is closed and drained.
	ErrClosed = errors.New("workqueue: closed")
)

// Hint is one reason to work on a key (an event, a job).
type Hint struct {
	// Merge, when not empty, names hints that supersede each other: a
	// newer hint with the same Merge replaces the waiting one in place.
	Merge string
	Value any

	priority Priority // the Work's that brought it
}

// Work is what Add queues for a key.
type Work struct {
	Key      string
	Priority Priority
	// Subject is what the key names (a repository); the latest wins.
	Subject any
	// Hint, when set, is added to the item's hints.
	Hint *Hint
	// Dirty asks for the whole subject to be reconciled (a resync).
	Dirty bool
}

// Item is a key's coalesced work, handed out by Get.
type Item struct {
	Key      string
	Priority Priority
	Subject  any
	Hints    []Hint
	Dirty    bool
	// Since is when the oldest of the merged work was first queued.
	Since time.Time
	// Attempt counts Retry calls that led to this item (0 the first time).
	Attempt int

	elem *list.Element // in ready[Priority], nil when blocked or running
	// split marks the bulk work left behind by an Interactive item:
	// it goes back in line by age, not at the end.
	split bool
}

// Options configures a Queue.
type Options struct {
	// Capacity bounds the distinct keys with waiting Interactive work
	// (default 1000).
	Capacity int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Stats is a snapshot for metrics.
type Stats struct {
	// Waiting counts waiting items by priority (blocked ones included).
	Waiting map[Priority]int
	// Running counts items handed out and not yet Done.
	Running int
	// Retrying counts items waiting out a Retry delay.
	Retrying int
	// OldestAge is the age of the oldest waiting item (0 when none).
	OldestAge time.Duration
}

// Queue is safe for concurrent use.
type Queue struct {
	opts Options

	mu       sync.Mutex
	waiting  map[string]*Item
	running  map[string]bool
	ready    [2]*list.List // by Priority: keys whose item may run now
	inter    int           // waiting items with Interactive priority
	retrying int
	closed   bool
	changed  chan struct{} // closed and replaced on every change
}

// New returns an empty queue.
func New(opts Options) *Queue {
	if opts.Capacity < 1 {
		opts.Capacity = 1000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Queue{opts: opts, waiting: map[string]*Item{}, running: map[string]bool{},
		ready: [2]*list.List{list.New(), list.New()}, changed: make(chan struct{})}
}

// Add queues w, merging it into the key's waiting item when there is one
// (coalesced reports that). Interactive work for a key with no waiting
// item is refused with ErrFull when Capacity keys already wait with
// Interactive work; Bulk work is never refused.
func (q *Queue) Add(w Work) (coalesced bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false, ErrClosed
	}
	coalesced, err = q.add(w)
	if err == nil {
		q.notify()
	}
	return coalesced, err
}

// AddBulk queues ws as Bulk work under one lock and one wake-up (a
// resync marks every repository dirty this way): webhook intake, which
// takes the same lock, waits for no per-repository lock traffic. It
// returns how many merged into a waiting item.
func (q *Queue) AddBulk(ws []Work) (coalesced int, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, ErrClosed
	}
	for _, w := range ws {
		w.Priority = Bulk
		if c, _ := q.add(w); c {
			coalesced++
		}
	}
	if len(ws) > 0 {
		q.notify()
	}
	return coalesced, nil
}

// add is Add without the wake-up; q.mu is held.
func (q *Queue) add(w Work) (coalesced bool, err error) {
	it := q.waiting[w.Key]
	if it == nil {
		if w.Priority == Interactive && q.inter >= q.opts.Capacity {
			return false, ErrFull
		}
		it = &Item{Key: w.Key, Priority: w.Priority, Since: q.opts.Now()}
		q.waiting[w.Key] = it
		if w.Priority == Interactive {
			q.inter++
		}
		q.merge(it, w)
		if !q.running[w.Key] {
			it.elem = q.ready[it.Priority].PushBack(it)
		}
		return false, nil
	}
	if w.Priority > it.Priority {
		q.raise(it, w.Priority)
	}
	q.merge(it, w)
	return true, nil
}

// raise moves a waiting item to a higher priority's ready list.
func (q *Queue) raise(it *Item, p Priority) {
	if it.Priority == Interactive {
		q.inter--
	}
	if p == Interactive {
		q.inter++
	}
	if it.elem != nil {
		q.ready[it.Priority].Remove(it.elem)
		it.elem = q.ready[p].PushBack(it)
	}
	it.Priority = p
}

func (q *Queue) merge(it *Item, w Work) {
	if w.Subject != nil {
		it.Subject = w.Subject
	}
	it.Dirty = it.Dirty || w.Dirty
	if w.Hint == nil {
		return
	}
	h := *w.Hint
	h.priority = w.Priority
	if h.Merge != "" {
		for i := range it.Hints {
			if it.Hints[i].Merge == h.Merge {
				it.Hints[i] = h
				return
			}
		}
	}
	it.Hints = append(it.Hints, h)
}

// splitBulk takes the bulk work out of an Interactive item that carries
// some besides its Interactive hints: the returned item (nil when there
// is none to split) is what stays waiting for the key.
func splitBulk(it *Item) *Item {
	var people, bulk []Hint
	for _, h := range it.Hints {
		if h.priority == Interactive {
			people = append(people, h)
		} else {
			bulk = append(bulk, h)
		}
	}
	if len(people) == 0 || (len(bulk) == 0 && !it.Dirty) {
		return nil
	}
	rest := &Item{Key: it.Key, Priority: Bulk, Subject: it.Subject, Hints: bulk, Dirty: it.Dirty, Since: it.Since, Attempt: it.Attempt, split: true}
	it.Hints, it.Dirty = people, false
	return rest
}

// notify wakes everything waiting for a change; q.mu is held.
func (q *Queue) notify() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// Get hands out the next item (Interactive first), marking its key
// running until Done or Retry. It blocks until there is one, ctx is done,
// or the queue is closed and has nothing left to hand out (ErrClosed).
func (q *Queue) Get(ctx context.Context) (*Item, error) {
	for {
		q.mu.Lock()
		for p := Interactive; p >= Bulk; p-- {
			if e := q.ready[p].Front(); e != nil {
				it := q.ready[p].Remove(e).(*Item)
				it.elem = nil
				delete(q.waiting, it.Key)
				if it.Priority == Interactive {
					q.inter--
					if rest := splitBulk(it); rest != nil {
						q.waiting[it.Key] = rest // ready again at Done
					}
				}
				q.running[it.Key] = true
				q.notify()
				q.mu.Unlock()
				return it, nil
			}
		}
		if q.closed && len(q.waiting) == 0 && q.retrying == 0 {
			q.mu.Unlock()
			return nil, ErrClosed
		}
		ch := q.changed
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		}
	}
}

// Done ends a handed-out item: its key's waiting item, if any, may run.
func (q *Queue) Done(it *Item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.done(it.Key)
}

func (q *Queue) done(key string) {
	delete(q.running, key)
	if w := q.waiting[key]; w != nil && w.elem == nil {
		if w.split {
			w.elem = q.insertByAge(w)
		} else {
			w.elem = q.ready[w.Priority].PushBack(w)
		}
	}
	q.notify()
}

// insertByAge puts w in its priority's ready list before the first item
// queued after it (the list is in arrival order). Split-off work is old,
// so the walk from the front is short.
func (q *Queue) insertByAge(w *Item) *list.Element {
	l := q.ready[w.Priority]
	for e := l.Front(); e != nil; e = e.Next() {
		if e.Value.(*Item).Since.After(w.Since) {
			return l.InsertBefore(w, e)
		}
	}
	return l.PushBack(w)
}

// Retry ends a handed-out item and queues its work again after delay,
// merged with whatever arrived for the key meanwhile, with Attempt one
// higher. Work retried after Close is dropped.
func (q *Queue) Retry(it *Item, delay time.Duration) {
	q.mu.Lock()
	q.done(it.Key)
	q.retrying++
	q.mu.Unlock()
	again := *it
	again.elem = nil
	time.AfterFunc(delay, func() { q.readd(&again) })
}

func (q *Queue) readd(it *Item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.retrying--
	defer q.notify()
	if q.closed {
		return
	}
	w := q.waiting[it.Key]
	if w == nil {
		w = &Item{Key: it.Key, Priority: it.Priority, Since: it.Since}
		q.waiting[it.Key] = w
		if w.Priority == Interactive {
			q.inter++
		}
		if !q.running[it.Key] {
			w.elem = q.ready[w.Priority].PushBack(w)
		}
	} else if it.Priority > w.Priority {
		q.raise(w, it.Priority)
	}
	// The retried work goes first: it arrived before what is waiting.
	w.Hints = append(append([]Hint(nil), it.Hints...), w.Hints...)
	w.Dirty = w.Dirty || it.Dirty
	if w.Subject == nil {
		w.Subject = it.Subject
	}
	if it.Since.Before(w.Since) {
		w.Since = it.Since
	}
	w.Attempt = max(w.Attempt, it.Attempt+1)
}

// Close stops Add; Get hands out what is left, then returns ErrClosed.
// Work waiting out a Retry delay is dropped.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.notify()
}

// Idle reports whether nothing waits, runs or is to be retried.
func (q *Queue) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.idle()
}

func (q *Queue) idle() bool {
	return len(q.waiting) == 0 && len(q.running) == 0 && q.retrying == 0
}

// WaitIdle blocks until the queue is Idle or ctx is done.
func (q *Queue) WaitIdle(ctx context.Context) error {
	for {
		q.mu.Lock()
		if q.idle() {
			q.mu.Unlock()
			return nil
		}
		ch := q.changed
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Stats returns a snapshot.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := Stats{Waiting: map[Priority]int{Interactive: q.inter, Bulk: len(q.waiting) - q.inter}, Running: len(q.running), Retrying: q.retrying}
	now := q.opts.Now()
	for _, it := range q.waiting {
		if age := now.Sub(it.Since); age > s.OldestAge {
			s.OldestAge = age
		}
	}
	return s
}
