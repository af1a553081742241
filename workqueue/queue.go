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

	// prev and next link the item into ready[Priority] when queued is set
	// (not while blocked behind its running key, nor while running).
	prev, next *Item
	queued     bool
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
	ready    [2]itemList // by Priority: keys whose item may run now
	inter    int         // waiting items with Interactive priority
	retrying int
	closed   bool
	// changed is closed on the next change; made by a waiter when nil,
	// so that nothing under q.mu allocates on the intake's path (an
	// allocation there can be made to assist the garbage collector, with
	// the lock held).
	changed chan struct{}
}

// New returns an empty queue.
func New(opts Options) *Queue {
	if opts.Capacity < 1 {
		opts.Capacity = 1000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Queue{opts: opts, waiting: map[string]*Item{}, running: map[string]bool{}}
}

// Add queues w, merging it into the key's waiting item when there is one
// (coalesced reports that). Interactive work for a key with no waiting
// item is refused with ErrFull when Capacity keys already wait with
// Interactive work; Bulk work is never refused.
func (q *Queue) Add(w Work) (coalesced bool, err error) {
	fresh := &Item{Hints: make([]Hint, 0, 1)}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false, ErrClosed
	}
	coalesced, err = q.add(w, fresh)
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
	fresh := make([]Item, len(ws))
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, ErrClosed
	}
	for i, w := range ws {
		w.Priority = Bulk
		if c, _ := q.add(w, &fresh[i]); c {
			coalesced++
		}
	}
	if len(ws) > 0 {
		q.notify()
	}
	return coalesced, nil
}

// add is Add without the wake-up, with fresh the item to use if the key
// has none waiting; q.mu is held.
func (q *Queue) add(w Work, fresh *Item) (coalesced bool, err error) {
	it := q.waiting[w.Key]
	if it == nil {
		if w.Priority == Interactive && q.inter >= q.opts.Capacity {
			return false, ErrFull
		}
		*fresh = Item{Key: w.Key, Priority: w.Priority, Since: q.opts.Now(), Hints: fresh.Hints}
		it = fresh
		q.waiting[w.Key] = it
		if w.Priority == Interactive {
			q.inter++
		}
		q.merge(it, w)
		if !q.running[w.Key] {
			q.ready[it.Priority].pushBack(it)
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
	if it.queued {
		q.ready[it.Priority].remove(it)
		q.ready[p].pushBack(it)
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
// some besides its Interactive hints: spare becomes what stays waiting
// for the key, returned (nil when there is nothing to split). It runs
// under q.mu and allocates only when jobs wait with a person's event.
func splitBulk(it, spare *Item) *Item {
	people, bulk := 0, 0
	for _, h := range it.Hints {
		if h.priority == Interactive {
			people++
		} else {
			bulk++
		}
	}
	if people == 0 || (bulk == 0 && !it.Dirty) {
		return nil
	}
	var rest []Hint
	if bulk > 0 {
		rest = make([]Hint, 0, bulk)
		kept := it.Hints[:0] // in place: writes never pass the reads
		for _, h := range it.Hints {
			if h.priority == Interactive {
				kept = append(kept, h)
			} else {
				rest = append(rest, h)
			}
		}
		it.Hints = kept
	}
	*spare = Item{Key: it.Key, Priority: Bulk, Subject: it.Subject, Hints: rest, Dirty: it.Dirty, Since: it.Since, Attempt: it.Attempt, split: true}
	it.Dirty = false
	return spare
}

// notify wakes everything waiting for a change; q.mu is held.
func (q *Queue) notify() {
	if q.changed != nil {
		close(q.changed)
		q.changed = nil
	}
}

// wait is the channel the next change closes; q.mu is held.
func (q *Queue) wait() <-chan struct{} {
	if q.changed == nil {
		q.changed = make(chan struct{})
	}
	return q.changed
}

// Get hands out the next item (Interactive first), marking its key
// running until Done or Retry. It blocks until there is one, ctx is done,
// or the queue is closed and has nothing left to hand out (ErrClosed).
func (q *Queue) Get(ctx context.Context) (*Item, error) {
	for {
		spare := &Item{} // what splitBulk may need, made before the lock
		q.mu.Lock()
		for p := Interactive; p >= Bulk; p-- {
			if it := q.ready[p].head; it != nil {
				q.ready[p].remove(it)
				delete(q.waiting, it.Key)
				if it.Priority == Interactive {
					q.inter--
					if rest := splitBulk(it, spare); rest != nil {
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
		ch := q.wait()
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
	if w := q.waiting[key]; w != nil && !w.queued {
		if w.split {
			q.insertByAge(w)
		} else {
			q.ready[w.Priority].pushBack(w)
		}
	}
	q.notify()
}

// insertByAge puts w in its priority's ready list before the first item
// queued after it (the list is in arrival order). Split-off work is old,
// so the walk from the front is short.
func (q *Queue) insertByAge(w *Item) {
	l := &q.ready[w.Priority]
	for at := l.head; at != nil; at = at.next {
		if at.Since.After(w.Since) {
			l.insertBefore(w, at)
			return
		}
	}
	l.pushBack(w)
}

// itemList is a doubly linked list of items through their prev and next
// fields: queueing and dequeueing allocate nothing.
type itemList struct{ head, tail *Item }

func (l *itemList) pushBack(it *Item) {
	it.prev, it.next, it.queued = l.tail, nil, true
	if l.tail != nil {
		l.tail.next = it
	} else {
		l.head = it
	}
	l.tail = it
}

func (l *itemList) insertBefore(it, at *Item) {
	it.prev, it.next, it.queued = at.prev, at, true
	if at.prev != nil {
		at.prev.next = it
	} else {
		l.head = it
	}
	at.prev = it
}

func (l *itemList) remove(it *Item) {
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		l.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		l.tail = it.prev
	}
	it.prev, it.next, it.queued = nil, nil, false
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
	again.prev, again.next, again.queued = nil, nil, false
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
			q.ready[w.Priority].pushBack(w)
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
		ch := q.wait()
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
