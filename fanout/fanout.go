// Package fanout brings the followers of an upstream package up to date
// when it publishes a revision: one job per follower, in that follower's
// own serialization under the server (inline, a few at a time, in the
// CLI and the Action), each follower's state recorded as its job
// finishes and shown on the upstream's dashboard.
package fanout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/ratelimit"
)

// workers bounds the downstream repositories worked on at once inline;
// the forge's write scheduler, not this, keeps the bot within rate limits.
const workers = 4

// Bot is what a fan-out needs of the bot: who follows a package, bringing
// one follower up to date, and the upstream's dashboard (*bot.Bot).
type Bot interface {
	Followers(ctx context.Context, upstream forge.Repo, pkg string) ([]forge.Repo, error)
	UpdateFollower(ctx context.Context, upstream forge.Repo, pkg string, follower forge.Repo) (bot.Outcome, []bot.VariantAction, error)
	ReportFanOut(ctx context.Context, upstream forge.Repo, pkg, section string) error
}

// Runner runs fan-outs for one bot.
type Runner struct {
	b    Bot
	log  *slog.Logger
	runs runs
	// reached counts downstream repositories a fan-out reached, by state.
	reached *prometheus.CounterVec
}

// New returns the fan-out runner of b; its metrics go to reg (nil: kept
// unregistered).
func New(b Bot, reg prometheus.Registerer, log *slog.Logger) (*Runner, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Runner{b: b, log: log, reached: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kptbot_fanout_downstreams_total",
		Help: "Downstream repositories reached by upstream fan-outs, by state (changed, up_to_date, held, skipped, dispatched, failed)."}, []string{"state"})}
	if reg != nil {
		if err := reg.Register(r.reached); err != nil {
			return nil, fmt.Errorf("registering the fan-out's metrics: %w", err)
		}
	}
	return r, nil
}

// For is bot.Options.NewFanOut: the runner of the bot being made.
func For(reg prometheus.Registerer, log *slog.Logger) func(*bot.Bot) (bot.FanOuter, error) {
	return func(b *bot.Bot) (bot.FanOuter, error) { return New(b, reg, log) }
}

// FanOut brings every variant that follows upstream's package pkg up to
// date.
//
// Under the server (a bot.Scheduler on ctx) it only queues one job per
// follower, in that follower's own serialization, and returns: nothing is
// written to a follower from the upstream's work, and the progress goes
// onto the upstream's dashboard as the jobs finish. Without one (the CLI,
// the Action) it works inline and returns every follower's actions.
func (f *Runner) FanOut(ctx context.Context, upstream forge.Repo, pkg string) (bot.Outcome, []bot.VariantAction, error) {
	ctx = ratelimit.WithPriority(ctx, ratelimit.Bulk)
	var out bot.Outcome
	followers, err := f.b.Followers(ctx, upstream, pkg)
	if err != nil {
		return out, nil, err
	}
	run := f.runs.start(upstream, pkg, followers)
	if s := bot.SchedulerFrom(ctx); s != nil {
		var errs []error
		for _, r := range followers {
			errs = append(errs, s.Schedule(r, bot.Job{Key: run.jobKey(), Run: func(ctx context.Context) error {
				_, _, err := f.fanOutTo(ctx, run, r)
				return err
			}}))
		}
		f.log.Info("fan-out queued", "upstream", upstream.FullName, "package", pkg, "followers", len(followers))
		return out, nil, errors.Join(errs...)
	}
	type result struct {
		out  bot.Outcome
		acts []bot.VariantAction
		err  error
		repo string
	}
	jobs := make(chan forge.Repo)
	results := make(chan result)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				o, acts, err := f.fanOutTo(ctx, run, r)
				results <- result{out: o, acts: acts, err: err, repo: r.FullName}
			}
		}()
	}
	go func() {
		for _, r := range followers {
			jobs <- r
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()
	var acts []bot.VariantAction
	var errs []error
	for res := range results {
		out.Add(res.out)
		acts = append(acts, res.acts...)
		if res.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", res.repo, res.err))
		}
	}
	sort.Slice(acts, func(i, j int) bool { return acts[i].Repo+acts[i].Package < acts[j].Repo+acts[j].Package })
	if err := f.report(ctx, run); err != nil {
		errs = append(errs, err)
	}
	return out, acts, errors.Join(errs...)
}

// fanOutTo brings one follower up to date (or dispatches to it), records
// its state in the run, and, under the server, queues the run's report on
// the upstream when one is due.
func (f *Runner) fanOutTo(ctx context.Context, run *fanRun, r forge.Repo) (bot.Outcome, []bot.VariantAction, error) {
	out, acts, err := f.b.UpdateFollower(ctx, run.upstream, run.pkg, r)
	state, metric := followerState(acts, err)
	f.reached.WithLabelValues(metric).Inc()
	if due := run.record(r.FullName, state); due {
		if s := bot.SchedulerFrom(ctx); s != nil {
			rerr := s.Schedule(run.upstream, bot.Job{Key: run.reportKey(), Run: func(ctx context.Context) error {
				if !f.runs.current(run) {
					return nil // a newer revision's fan-out reports instead
				}
				return f.report(ratelimit.WithPriority(ctx, ratelimit.Bulk), run)
			}})
			err = errors.Join(err, rerr)
		}
	}
	return out, acts, err
}

// report writes the run's progress onto the upstream's dashboard.
func (f *Runner) report(ctx context.Context, run *fanRun) error {
	progress := run.snapshot()
	if len(progress) == 0 {
		return nil
	}
	return f.b.ReportFanOut(ctx, run.upstream, run.pkg, Section(run.upstream.FullName, run.pkg, progress))
}

// followerState is how one follower's result shows on the dashboard, and
// its metric label.
func followerState(acts []bot.VariantAction, err error) (state, metric string) {
	if err != nil {
		return "failed: " + bot.UserMessage(err), "failed"
	}
	state, metric = "up to date", "up_to_date"
	for _, a := range acts {
		switch {
		case a.Kind == "dispatch":
			state, metric = "dispatched", "dispatched"
		case a.Change != 0 && (a.Kind == "clone" || a.Kind == "update" || a.Kind == "edit"):
			state, metric = fmt.Sprintf("change #%d (%s)", a.Change, a.Kind), "changed"
			if len(a.Conflicts) > 0 {
				state = fmt.Sprintf("change #%d (%s, %d conflicts)", a.Change, a.Kind, len(a.Conflicts))
			}
		case a.Kind == "held", a.Kind == "skip":
			state, metric = a.Kind+": "+a.Why, a.Kind
			if a.Kind == "skip" {
				metric = "skipped"
			}
		}
	}
	return state, metric
}
