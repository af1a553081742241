package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/commands"
	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/ratelimit"
	"github.com/kptbot/kptbot/porch"
)

// FanOuter brings every follower of an upstream package up to date: the
// fanout package's job runner, made by Options.NewFanOut.
type FanOuter interface {
	FanOut(ctx context.Context, upstream forge.Repo, pkg string) (Outcome, []VariantAction, error)
}

// FanOut brings every variant that follows upstream's package pkg up to
// date (see Options.NewFanOut). A fan-out follows a new revision, so the
// upstream's tags are read afresh.
func (b *Bot) FanOut(ctx context.Context, upstream forge.Repo, pkg string) (Outcome, []VariantAction, error) {
	b.index.ForgetTags(upstream)
	if b.fanOut == nil {
		return Outcome{}, nil, nil
	}
	return b.fanOut.FanOut(ctx, upstream, pkg)
}

// Followers are the repositories with a variant of upstream's package pkg,
// from the follower index.
func (b *Bot) Followers(ctx context.Context, upstream forge.Repo, pkg string) ([]forge.Repo, error) {
	return b.followers(ctx, upstream, pkg)
}

// UpdateFollower brings follower's variants of upstream's package pkg up
// to date, inside follower's serialization: a clone, update or edit
// change (or, with FanOutByDispatch, a dispatch telling it to update
// itself).
func (b *Bot) UpdateFollower(ctx context.Context, upstream forge.Repo, pkg string, follower forge.Repo) (Outcome, []VariantAction, error) {
	ctx = ratelimit.WithPriority(ctx, ratelimit.Bulk)
	var out Outcome
	if b.opts.FanOutByDispatch {
		acts, err := b.dispatchTo(ctx, upstream, pkg, follower)
		return out, acts, err
	}
	follows := func(pv config.PackageVariant) bool {
		up := pv.Spec.Upstream
		return up != nil && b.index.RefersTo(up.Repo, upstream) && strings.Trim(up.Package, "/") == pkg
	}
	var acts []VariantAction
	err := b.withRepo(ctx, follower, &out, func(rc *repoCtx) error {
		var err error
		acts, err = b.reconcileVariants(ctx, rc, follows)
		return err
	})
	return out, acts, err
}

// ReportFanOut puts section, a fan-out's progress for pkg, onto the
// upstream repository's dashboard issue.
func (b *Bot) ReportFanOut(ctx context.Context, upstream forge.Repo, pkg, section string) error {
	if b.opts.DryRun {
		return nil
	}
	var out Outcome
	return b.withRepo(ctx, upstream, &out, func(rc *repoCtx) error {
		rc.fanOut = map[string]string{pkg: section}
		return b.dashboard(ctx, rc)
	})
}

// UserMessage is what the people on a change or a dashboard may read of
// err: no internals, no tokens.
func UserMessage(err error) string { return commands.UserMessage(err) }

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
	f, err := b.forgeFor(ctx, r)
	if err == nil {
		err = f.Dispatch(ctx, r, DispatchEventType, payload)
	}
	if err != nil {
		a.Kind, a.Why = "skip", err.Error()
		return []VariantAction{a}, fmt.Errorf("dispatching to %s: %w", r.FullName, err)
	}
	return []VariantAction{a}, nil
}

// onTag fans a newly published upstream revision out to its followers.
func (b *Bot) onTag(ctx context.Context, ev forge.Event, out *Outcome) error {
	b.index.ForgetTags(ev.Repo)
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
	ix, err := b.index.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]forge.Repo, 0, len(ix))
	for _, i := range ix {
		out = append(out, i.Repo)
	}
	return out, nil
}

// openChangeFor is the open change from branch, nil when there is none.
func openChangeFor(ctx context.Context, rc *repoCtx, branch string) (*forge.Change, error) {
	cs, err := rc.f.ListChangesByHead(ctx, rc.repo, branch)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		if cs[i].State == "open" {
			return &cs[i], nil
		}
	}
	return nil, nil
}
