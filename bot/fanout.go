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
	"github.com/kptbot/kptbot/forge/gitrepo"
	"github.com/kptbot/kptbot/forge/ratelimit"
)

// fanOutWorkers bounds the downstream repositories worked on at once; the
// forge's write scheduler, not this, keeps the bot within rate limits.
const fanOutWorkers = 4

// FanOut brings every variant that follows upstream's package pkg up to
// date: a clone, update or edit change in each downstream repository.
func (b *Bot) FanOut(ctx context.Context, upstream forge.Repo, pkg string) (Outcome, []VariantAction, error) {
	ctx = ratelimit.WithPriority(ctx, ratelimit.Bulk)
	var out Outcome
	followers, err := b.followers(ctx, upstream, pkg)
	if err != nil {
		return out, nil, err
	}
	if b.opts.FanOutByDispatch {
		return b.dispatchFanOut(ctx, upstream, pkg, followers)
	}
	follows := func(pv config.PackageVariant) bool {
		up := pv.Spec.Upstream
		return up != nil && sameUpstream(up.Repo, upstream) && strings.Trim(up.Package, "/") == pkg
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
				var o Outcome
				var acts []VariantAction
				err := b.withRepo(ctx, r, &o, func(rc *repoCtx) error {
					var err error
					acts, err = b.reconcileVariants(ctx, rc, follows)
					return err
				})
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
	progress := map[string]string{}
	for res := range results {
		out.Add(res.out)
		acts = append(acts, res.acts...)
		state, metric := "up to date", "up_to_date"
		for _, a := range res.acts {
			switch {
			case a.Change != 0 && (a.Kind == "clone" || a.Kind == "update" || a.Kind == "edit"):
				state, metric = fmt.Sprintf("change #%d (%s)", a.Change, a.Kind), "changed"
			case a.Kind == "held", a.Kind == "skip":
				state, metric = a.Kind+": "+a.Why, a.Kind
				if a.Kind == "skip" {
					metric = "skipped"
				}
			}
		}
		if res.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", res.repo, res.err))
			state, metric = "failed: "+userMessage(res.err), "failed"
		}
		b.fanOuts.WithLabelValues(metric).Inc()
		progress[res.repo] = state
	}
	sort.Slice(acts, func(i, j int) bool { return acts[i].Repo+acts[i].Package < acts[j].Repo+acts[j].Package })
	if err := b.fanOutReport(ctx, upstream, pkg, progress); err != nil {
		errs = append(errs, err)
	}
	return out, acts, errors.Join(errs...)
}

// DispatchEventType is the event a dispatched fan-out sends each follower
// (repository_dispatch event_type; GitLab: the KPTBOT_EVENT variable).
const DispatchEventType = "kptbot-upstream-published"

// dispatchFanOut tells each follower that pkg has a new revision; their
// own kptbot runs (the Action, a GitLab job) do the updating.
func (b *Bot) dispatchFanOut(ctx context.Context, upstream forge.Repo, pkg string, followers []forge.Repo) (Outcome, []VariantAction, error) {
	var out Outcome
	var acts []VariantAction
	var errs []error
	progress := map[string]string{}
	payload := map[string]any{"upstream": upstream.FullName, "cloneURL": upstream.CloneURL, "package": pkg}
	for _, r := range followers {
		a := VariantAction{Repo: r.FullName, Package: pkg, Kind: "dispatch", Why: "told to update itself"}
		state := "dispatched"
		if !b.opts.DryRun {
			f, err := b.forgeFor(r)
			if err == nil {
				err = f.Dispatch(ctx, r, DispatchEventType, payload)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("dispatching to %s: %w", r.FullName, err))
				state, a.Kind, a.Why = "failed: "+userMessage(err), "skip", err.Error()
			}
		}
		progress[r.FullName] = state
		if a.Kind == "dispatch" {
			b.fanOuts.WithLabelValues("dispatched").Inc()
		} else {
			b.fanOuts.WithLabelValues("failed").Inc()
		}
		acts = append(acts, a)
	}
	if err := b.fanOutReport(ctx, upstream, pkg, progress); err != nil {
		errs = append(errs, err)
	}
	return out, acts, errors.Join(errs...)
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
	tag := strings.TrimPrefix(ev.Ref, "refs/tags/")
	i := strings.LastIndex(tag, "/")
	if i < 0 {
		out.Skipped = "tag " + tag + " is not a package revision (<package>/v<N>)"
		return nil
	}
	if _, ok := gitrepo.ParseRevision(tag[i+1:]); !ok {
		out.Skipped = "tag " + tag + " is not a package revision (<package>/v<N>)"
		return nil
	}
	o, _, err := b.FanOut(ctx, ev.Repo, tag[:i])
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
