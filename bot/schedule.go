package bot

import (
	"context"
	"strings"

	"github.com/kptbot/kptbot/forge"
)

// Job is work on one repository that something else asked for (a
// fan-out's update of a follower, the fan-out's progress report on the
// upstream): it runs inside that repository's serialization.
type Job struct {
	// Key names jobs that supersede each other: a job waiting for a
	// repository is replaced by a newer one with the same Key.
	Key string
	Run func(ctx context.Context) error
}

// Scheduler queues work on a repository in that repository's own
// serialization. The server provides one to the work it runs; the CLI
// has none and works inline.
type Scheduler interface {
	Schedule(r forge.Repo, j Job) error
	// Resync marks r for a full reconcile.
	Resync(r forge.Repo)
}

type schedulerKey struct{}

// WithScheduler makes s the scheduler of the work done with ctx (the
// server's workers run every item under it).
func WithScheduler(ctx context.Context, s Scheduler) context.Context {
	return context.WithValue(ctx, schedulerKey{}, s)
}

// SchedulerFrom is the scheduler the work done with ctx runs under, nil
// when inline (the CLI, the Action).
func SchedulerFrom(ctx context.Context) Scheduler {
	s, _ := ctx.Value(schedulerKey{}).(Scheduler)
	return s
}

// RepoKey is a repository's serialization key: the server queues its work
// under it, and fan-out jobs are named with it.
func RepoKey(r forge.Repo) string { return r.Forge + "/" + strings.ToLower(r.FullName) }
