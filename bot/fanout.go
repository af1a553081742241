package bot

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/ratelimit"
	"github.com/kptbot/kptbot/porch"
)

// fanOutWorkers bounds the downstream repositories worked on at once; the
// forge's write scheduler, not this, keeps the bot within rate limits.
const fanOutWorkers = 4

// FanOut brings every variant that follows upstream's package pkg up to
// date: a clone, update or edit change in each downstream repository (or,
// with FanOutByDispatch, a dispatch telling it to update itself).
//
// Under the server (a Scheduler on ctx) it only queues one job per
// follower, in that follower's own serialization, and returns: nothing is
// written to a follower from the upstream's work, and the progress goes
// onto the upstream's dashboard as the jobs finish. Without one (the CLI,
// the Action) it works inline and returns every follower's actions.
func (b *Bot) FanOut(ctx context.Context, upstream forge.Repo, pkg string) (Outcome, []VariantAction, error) {
	ctx = ratelimit.WithPriority(ctx, ratelimit.Bulk)
	// A fan-out follows a new revision: the tags are read afresh.
	b.forgetTags(upstream)
	var out Outcome
	followers, err := b.followers(ctx, upstream, pkg)
	if err != nil {
		return out, nil, err
	}
	run := b.fanOutRuns.start(upstream, pkg, followers)
	if s := schedulerFrom(ctx); s != nil {
		var errs []error
		for _, r := range followers {
			errs = append(errs, s.Schedule(r, Job{Key: run.jobKey(), Run: func(ctx context.Context) error {
				_, _, err := b.fanOutTo(ctx, run, r)
				return err
			}}))
		}
		b.log.Info("fan-out queued", "upstream", upstream.FullName, "package", pkg, "followers", len(followers))
		return out, nil, errors.Join(errs...)
	}
	type result struct {
		out  Outcome
		acts []VariantAction
		err  error
		repo string
	}
	jobs := make(chan forge.Repo)
	results := make(chan result)
	var wg sync.WaitGroup
	for i := 0; i < fanOutWorkers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				o, acts, err := b.fanOutTo(ctx, run, r)
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
	var acts []VariantAction
	var errs []error
	for res := range results {
		out.Add(res.out)
		acts = append(acts, res.acts...)
		if res.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", res.repo, res.err))
		}
	}
	sort.Slice(acts, func(i, j int) bool { return acts[i].Repo+acts[i].Package < acts[j].Repo+acts[j].Package })
	if err := b.fanOutReport(ctx, upstream, pkg, run.snapshot()); err != nil {
		errs = append(errs, err)
	}
	return out, acts, errors.Join(errs...)
}

// fanOutTo brings one follower up to date (or dispatches to it), records
// its state in the run, and, under the server, queues the run's report on
// the upstream when one is due.
func (b *Bot) fanOutTo(ctx context.Context, run *fanOutRun, r forge.Repo) (Outcome, []VariantAction, error) {
	ctx = ratelimit.WithPriority(ctx, ratelimit.Bulk)
	var out Outcome
	var acts []VariantAction
	var err error
	if b.opts.FanOutByDispatch {
		acts, err = b.dispatchTo(ctx, run.upstream, run.pkg, r)
	} else {
		follows := func(pv config.PackageVariant) bool {
			up := pv.Spec.Upstream
			return up != nil && sameUpstream(up.Repo, run.upstream) && strings.Trim(up.Package, "/") == run.pkg
		}
		err = b.withRepo(ctx, r, &out, func(rc *repoCtx) error {
			var err error
			acts, err = b.reconcileVariants(ctx, rc, follows)
			return err
		})
	}
	state, metric := fanOutState(acts, err)
	b.fanOuts.WithLabelValues(metric).Inc()
	if due := run.record(r.FullName, state); due {
		if s := schedulerFrom(ctx); s != nil {
			rerr := s.Schedule(run.upstream, Job{Key: run.reportKey(), Run: func(ctx context.Context) error {
				if !b.fanOutRuns.current(run) {
					return nil // a newer revision's fan-out reports instead
				}
				return b.fanOutReport(ratelimit.WithPriority(ctx, ratelimit.Bulk), run.upstream, run.pkg, run.snapshot())
			}})
			err = errors.Join(err, rerr)
		}
	}
	return out, acts, err
}

// fanOutState is how one follower's result shows on the dashboard, and
// its metric label.
func fanOutState(acts []VariantAction, err error) (state, metric string) {
	if err != nil {
		return "failed: " + userMessage(err), "failed"
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

// DispatchEventType is the event a dispatched fan-out sends each follower
// (repository_dispatch event_type; GitLab: the KPTBOT_EVENT variable).
const DispatchEventType = "kptbot-upstream-published"

// dispatchTo tells one follower that pkg has a new revision; its own
// kptbot run (the Action, a GitLab job) does the updating.
func (b *Bot) dispatchTo(ctx context.Context, upstream forge.Repo, pkg string, r forge.Repo) ([]VariantAction, error) {
	a := VariantAction{Repo: r.FullName, Package: pkg, Kind: "dispatch", Why: "told to update itself"}
	if b.opts.DryRun {
		return []VariantAction{a}, nil
	}
	payload := map[string]any{"upstream": upstream.FullName, "cloneURL": upstream.CloneURL, "package": pkg}
	f, err := b.forgeFor(r)
	if err == nil {
		err = f.Dispatch(ctx, r, DispatchEventType, payload)
	}
	if err != nil {
		a.Kind, a.Why = "skip", err.Error()
		return []VariantAction{a}, fmt.Errorf("dispatching to %s: %w", r.FullName, err)
	}
	return []VariantAction{a}, nil
}

// fanOutReport writes the fan-out's progress, per downstream repository,
// onto the upstream repository's dashboard issue.
func (b *Bot) fanOutReport(ctx context.Context, upstream forge.Repo, pkg string, progress map[string]string) error {
	if b.opts.DryRun || len(progress) == 0 {
		return nil
	}
	var out Outcome
	return b.withRepo(ctx, upstream, &out, func(rc *repoCtx) error {
		rc.fanOut = map[string]map[string]string{pkg: progress}
		return b.dashboard(ctx, rc)
	})
}

// onTag fans a newly published upstream revision out to its followers.
func (b *Bot) onTag(ctx context.Context, ev forge.Event, out *Outcome) error {
	b.forgetTags(ev.Repo)
	tag := strings.TrimPrefix(ev.Ref, "refs/tags/")
	pkg, _, ok := porch.ParseTag(tag)
	if !ok {
		out.Skipped = "tag " + tag + " is not a package revision (<package>/v<N>)"
		return nil
	}
	o, _, err := b.FanOut(ctx, ev.Repo, pkg)
	out.Add(o)
	return err
}

// Plan returns what reconciling a repository's variants would do, writing
// nothing when the Bot was made with DryRun.
func (b *Bot) Plan(ctx context.Context, r forge.Repo) ([]VariantAction, Outcome, error) {
	var out Outcome
	var acts []VariantAction
	err := b.withRepo(ctx, r, &out, func(rc *repoCtx) error {
		var err error
		acts, err = b.reconcileVariants(ctx, rc, nil)
		return err
	})
	return acts, out, err
}

// Repos lists every repository the bot's forges let it see.
func (b *Bot) Repos(ctx context.Context) ([]forge.Repo, error) {
	ix, err := b.snapshotIndex(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]forge.Repo, 0, len(ix))
	for _, i := range ix {
		out = append(out, i.repo)
	}
	return out, nil
}
