package workqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func get(t *testing.T, q *Queue) *Item {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	it, err := q.Get(ctx)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return it
}

// empty reports whether Get would block.
func empty(q *Queue) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := q.Get(ctx)
	return errors.Is(err, context.DeadlineExceeded)
}

func hint(merge string, v any) *Hint { return &Hint{Merge: merge, Value: v} }

func values(it *Item) []any {
	var out []any
	for _, h := range it.Hints {
		out = append(out, h.Value)
	}
	return out
}

func TestCoalescing(t *testing.T) {
	cases := []struct {
		name      string
		adds      []Work
		wantItems int
		wantHints [][]any // per item, in hand-out order
		wantDirty []bool
		coalesced int
	}{
		{"one key, many events: one item with every hint in order",
			[]Work{{Key: "a", Hint: hint("", 1)}, {Key: "a", Hint: hint("", 2)}, {Key: "a", Hint: hint("", 3)}},
			1, [][]any{{1, 2, 3}}, []bool{false}, 2},
		{"same merge key: the newer hint replaces the older in place",
			[]Work{{Key: "a", Hint: hint("fanout", "v1")}, {Key: "a", Hint: hint("c", "cmd")}, {Key: "a", Hint: hint("fanout", "v2")}},
			1, [][]any{{"v2", "cmd"}}, []bool{false}, 2},
		{"resync marks dirty instead of queueing a copy",
			[]Work{{Key: "a", Dirty: true}, {Key: "a", Dirty: true}, {Key: "a", Hint: hint("", "ev")}, {Key: "a", Dirty: true}},
			1, [][]any{{"ev"}}, []bool{true}, 3},
		{"distinct keys stay distinct",
			[]Work{{Key: "a", Hint: hint("", 1)}, {Key: "b", Dirty: true}, {Key: "a", Hint: hint("", 2)}},
			2, [][]any{{1, 2}, nil}, []bool{false, true}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := New(Options{})
			n := 0
			for _, w := range c.adds {
				co, err := q.Add(w)
				if err != nil {
					t.Fatal(err)
				}
				if co {
					n++
				}
			}
			if n != c.coalesced {
				t.Errorf("coalesced %d, want %d", n, c.coalesced)
			}
			for i := 0; i < c.wantItems; i++ {
				it := get(t, q)
				if fmt.Sprint(values(it)) != fmt.Sprint(c.wantHints[i]) || it.Dirty != c.wantDirty[i] {
					t.Errorf("item %d: hints %v dirty %v, want %v %v", i, values(it), it.Dirty, c.wantHints[i], c.wantDirty[i])
				}
				q.Done(it)
			}
			if !empty(q) {
				t.Error("more items than expected")
			}
		})
	}
}

// TestInteractiveFirst: a webhook's item goes before bulk work queued
// earlier, and raising a waiting bulk item moves its webhook work ahead
// (its resync stays in its place among the bulk work).
func TestInteractiveFirst(t *testing.T) {
	now := time.Unix(1000, 0)
	q := New(Options{Now: func() time.Time { now = now.Add(time.Second); return now }})
	for i := 0; i < 5; i++ {
		q.Add(Work{Key: fmt.Sprint("bulk", i), Dirty: true})
	}
	q.Add(Work{Key: "people", Priority: Interactive, Hint: hint("", "comment")})
	q.Add(Work{Key: "bulk3", Priority: Interactive, Hint: hint("", "review")})
	var order []string
	for i := 0; i < 7; i++ {
		it := get(t, q)
		order = append(order, it.Key)
		q.Done(it)
	}
	if got := fmt.Sprint(order); got != "[people bulk3 bulk0 bulk1 bulk2 bulk3 bulk4]" {
		t.Errorf("order %s", got)
	}
}

// TestOneRunningOneWaitingPerKey: while a key runs, new work for it waits
// (merged into one item) and is not handed out until Done.
func TestOneRunningOneWaitingPerKey(t *testing.T) {
	q := New(Options{})
	q.Add(Work{Key: "a", Hint: hint("", 1)})
	first := get(t, q)
	q.Add(Work{Key: "a", Hint: hint("", 2)})
	q.Add(Work{Key: "a", Hint: hint("", 3)})
	q.Add(Work{Key: "b", Hint: hint("", "b")})
	if it := get(t, q); it.Key != "b" {
		t.Fatalf("got %s while a runs, want b", it.Key)
	} else {
		q.Done(it)
	}
	if !empty(q) {
		t.Fatal("a's second item was handed out while the first runs")
	}
	q.Done(first)
	it := get(t, q)
	if it.Key != "a" || fmt.Sprint(values(it)) != "[2 3]" {
		t.Errorf("after Done: %s %v, want a [2 3]", it.Key, values(it))
	}
}

// TestBoundCountsDistinctInteractiveKeys: the capacity is in keys, merges
// are never refused, and bulk work neither is refused nor takes room.
func TestBoundCountsDistinctInteractiveKeys(t *testing.T) {
	q := New(Options{Capacity: 2})
	for i := 0; i < 100; i++ {
		if _, err := q.Add(Work{Key: fmt.Sprint("repo", i), Dirty: true}); err != nil {
			t.Fatalf("bulk refused: %v", err)
		}
	}
	for i := 0; i < 10; i++ {
		if _, err := q.Add(Work{Key: "x", Priority: Interactive, Hint: hint("", i)}); err != nil {
			t.Fatalf("merge into x refused: %v", err)
		}
	}
	if _, err := q.Add(Work{Key: "y", Priority: Interactive}); err != nil {
		t.Fatalf("second key refused: %v", err)
	}
	if _, err := q.Add(Work{Key: "z", Priority: Interactive}); !errors.Is(err, ErrFull) {
		t.Fatalf("third distinct key: %v, want ErrFull", err)
	}
	if _, err := q.Add(Work{Key: "z", Dirty: true}); err != nil {
		t.Fatalf("bulk refused when interactive is full: %v", err)
	}
	st := q.Stats()
	if st.Waiting[Interactive] != 2 || st.Waiting[Bulk] != 101 {
		t.Errorf("stats %+v", st)
	}
	it := get(t, q) // x or y: room for one more
	q.Done(it)
	if _, err := q.Add(Work{Key: "w", Priority: Interactive}); err != nil {
		t.Errorf("after one ran: %v", err)
	}
}

func TestRetryMergesAndCounts(t *testing.T) {
	q := New(Options{})
	q.Add(Work{Key: "a", Priority: Interactive, Subject: "repo-a", Hint: hint("", "boom")})
	it := get(t, q)
	q.Retry(it, 30*time.Millisecond)
	q.Add(Work{Key: "a", Dirty: true, Hint: hint("", "later")})
	if q.Idle() {
		t.Fatal("idle with a retry pending")
	}
	// What arrived meanwhile may run first; the retried work joins it if
	// it is still waiting, else comes after.
	got := get(t, q)
	q.Done(got)
	var all []any
	all = append(all, values(got)...)
	attempts := got.Attempt
	if len(all) < 2 {
		again := get(t, q)
		all = append(all, values(again)...)
		attempts = again.Attempt
		q.Done(again)
	}
	if len(all) != 2 || attempts != 1 {
		t.Errorf("hints %v attempt %d; want boom and later, attempt 1", all, attempts)
	}
	if err := q.WaitIdle(context.Background()); err != nil || !q.Idle() {
		t.Error("not idle at the end")
	}
}

func TestCloseDrains(t *testing.T) {
	q := New(Options{})
	q.Add(Work{Key: "a", Dirty: true})
	q.Close()
	if _, err := q.Add(Work{Key: "b"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v", err)
	}
	it := get(t, q)
	q.Done(it)
	if _, err := q.Get(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after drain: %v", err)
	}
}

func TestOldestAge(t *testing.T) {
	now := time.Unix(1000, 0)
	q := New(Options{Now: func() time.Time { return now }})
	q.Add(Work{Key: "a", Dirty: true})
	now = now.Add(5 * time.Second)
	q.Add(Work{Key: "b", Dirty: true})
	q.Add(Work{Key: "a", Hint: hint("", 1)}) // a merge keeps a's first time
	now = now.Add(time.Second)
	if age := q.Stats().OldestAge; age != 6*time.Second {
		t.Errorf("oldest age %v, want 6s", age)
	}
}

// TestNoKeyRunsTwiceAtOnce hammers the queue from many goroutines.
func TestNoKeyRunsTwiceAtOnce(t *testing.T) {
	q := New(Options{Capacity: 1 << 20})
	var running sync.Map
	var handled, overlaps atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				it, err := q.Get(ctx)
				if err != nil {
					return
				}
				if _, dup := running.LoadOrStore(it.Key, true); dup {
					overlaps.Add(1)
				}
				time.Sleep(time.Microsecond)
				running.Delete(it.Key)
				handled.Add(int64(len(it.Hints)))
				q.Done(it)
			}
		}()
	}
	var adders sync.WaitGroup
	for a := 0; a < 4; a++ {
		adders.Add(1)
		go func(a int) {
			defer adders.Done()
			for i := 0; i < 2000; i++ {
				q.Add(Work{Key: fmt.Sprint("k", i%10), Priority: Priority(i % 2), Hint: hint("", i)})
			}
		}(a)
	}
	adders.Wait()
	if err := q.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancel()
	wg.Wait()
	if overlaps.Load() != 0 {
		t.Errorf("%d times a key ran twice at once", overlaps.Load())
	}
	if handled.Load() != 8000 {
		t.Errorf("%d hints handled, want 8000 (none lost)", handled.Load())
	}
}

// TestInteractiveLeavesBulkBehind: a comment merged into a repository's
// waiting resync and fan-out job is handed out alone, so it is not held
// up by the reconcile; the bulk work stays waiting for the key (not
// handed out while the comment runs) and goes back in line by its age,
// ahead of bulk work queued after it.
func TestInteractiveLeavesBulkBehind(t *testing.T) {
	now := time.Unix(1000, 0)
	q := New(Options{Now: func() time.Time { now = now.Add(time.Second); return now }})
	q.Add(Work{Key: "a", Dirty: true})
	q.Add(Work{Key: "a", Hint: hint("fanout", "job")})
	q.Add(Work{Key: "b", Dirty: true})
	q.Add(Work{Key: "c", Dirty: true})
	q.Add(Work{Key: "a", Priority: Interactive, Hint: hint("", "comment")})
	it := get(t, q)
	if it.Key != "a" || fmt.Sprint(values(it)) != "[comment]" || it.Dirty {
		t.Fatalf("first item %s %v dirty=%v, want a [comment] without the resync", it.Key, values(it), it.Dirty)
	}
	if st := q.Stats(); st.Waiting[Interactive] != 0 || st.Waiting[Bulk] != 3 {
		t.Errorf("stats while the comment runs: %+v, want a's bulk work waiting with b and c", st)
	}
	other := get(t, q)
	if other.Key != "b" {
		t.Fatalf("while a's comment runs got %s, want b (a's bulk work must wait for it)", other.Key)
	}
	q.Done(other)
	q.Done(it)
	rest := get(t, q)
	if rest.Key != "a" || fmt.Sprint(values(rest)) != "[job]" || !rest.Dirty || rest.Priority != Bulk {
		t.Errorf("after the comment: %s %v dirty=%v %v, want a [job] dirty bulk, ahead of c", rest.Key, values(rest), rest.Dirty, rest.Priority)
	}
	q.Done(rest)
	if last := get(t, q); last.Key != "c" {
		t.Errorf("last %s, want c", last.Key)
	}
}

// TestAddBulk: a batch is bulk work whatever it says, merges like Add,
// and wakes a waiting Get.
func TestAddBulk(t *testing.T) {
	q := New(Options{Capacity: 1})
	q.Add(Work{Key: "a", Priority: Interactive, Hint: hint("", "comment")})
	got := make(chan *Item)
	go func() {
		it, _ := q.Get(context.Background())
		q.Done(it)
		it2, _ := q.Get(context.Background())
		got <- it2
	}()
	time.Sleep(20 * time.Millisecond)
	n, err := q.AddBulk([]Work{{Key: "b", Dirty: true}, {Key: "b", Dirty: true, Priority: Interactive}, {Key: "c", Dirty: true}})
	if err != nil || n != 1 {
		t.Fatalf("AddBulk: %d coalesced, %v; want 1, nil", n, err)
	}
	select {
	case it := <-got:
		if it.Key != "b" || !it.Dirty || it.Priority != Bulk {
			t.Errorf("got %s dirty=%v %v, want b, dirty, bulk", it.Key, it.Dirty, it.Priority)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a waiting Get was not woken")
	}
	if st := q.Stats(); st.Waiting[Interactive] != 0 || st.Waiting[Bulk] != 1 {
		t.Errorf("stats %+v, want c waiting as bulk", st)
	}
	q.Close()
	if _, err := q.AddBulk([]Work{{Key: "d"}}); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}
