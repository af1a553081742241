package server

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
)

// niceRecorder records the CPU priority (nice) of the thread its work
// runs on.
type niceRecorder struct{ nice chan int }

func (n niceRecorder) Handle(context.Context, forge.Event) (bot.Outcome, error) {
	return bot.Outcome{}, nil
}

func (n niceRecorder) Reconcile(context.Context, forge.Repo) (bot.Outcome, error) {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		return bot.Outcome{}, err
	}
	n.nice <- 20 - p // the raw syscall returns 20 - nice
	return bot.Outcome{}, nil
}

// TestWorkersRunBelowIntake: with LowerWorkerPriority (what `kptbot serve`
// sets), a worker's reconcile runs on a thread workerNice below the
// intake's priority, so a webhook's goroutine gets a core before bulk work
// on a machine the workers keep busy; without it, at the process's own.
func TestWorkersRunBelowIntake(t *testing.T) {
	base, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	base = 20 - base
	for _, lower := range []bool{true, false} {
		h := niceRecorder{nice: make(chan int, 8)}
		repos := []forge.Repo{{Forge: forge.GitHub, FullName: "acme/site-a"}}
		s := New(Options{Handler: h, Workers: 1, ResyncInterval: time.Hour, LowerWorkerPriority: lower,
			Repos: func(context.Context) ([]forge.Repo, error) { return repos, nil }})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		var got int
		select {
		case got = <-h.nice:
		case <-time.After(30 * time.Second):
			t.Fatal("the first resync's reconcile never ran")
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		want := base
		if lower {
			want = min(base+workerNice, 19)
		}
		if got != want {
			t.Errorf("LowerWorkerPriority %v: the worker ran at nice %d, want %d (the intake's is %d)", lower, got, want, base)
		}
	}
}
