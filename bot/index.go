package bot

import (
	"context"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/index"
)

// newIndex is the bot's follower index over its forges (package index).
func (b *Bot) newIndex() *index.Index {
	return index.New(index.Options{Forges: b.opts.Forges, Read: b.readOne})
}

// RefreshIndex re-reads every visible repository's kptbot.yaml, a few
// repositories at a time. Concurrent callers share one rebuild.
func (b *Bot) RefreshIndex(ctx context.Context) error { return b.index.Refresh(ctx) }

// readOne is one repository's index entry (no config when it has none or
// an invalid one).
func (b *Bot) readOne(ctx context.Context, r forge.Repo) index.Entry {
	f, err := b.forgeFor(ctx, r)
	if err != nil {
		// Kept, so the failure shows where the repository is used.
		f = forge.Unavailable(err)
	}
	var out Outcome
	rc, err := b.openWith(ctx, f, r, &out)
	ix := index.Entry{F: f, Repo: r}
	if err == nil && rc.cfgPath != "" {
		ix.Cfg = rc.cfg
	}
	return ix
}

// onRenamed follows a repository renamed or transferred: its entry under
// the old name goes (with the old name's cached tags), the new name is
// read and reconciled like a repository just added, so the variants it
// follows keep coming to it and nothing is sent to the old name.
func (b *Bot) onRenamed(ctx context.Context, ev forge.Event, out *Outcome) error {
	old := forge.Repo{Forge: ev.Forge, FullName: ev.From}
	r := ev.Repo
	r.Forge = ev.Forge
	b.index.Unindex(old)
	b.index.ForgetTags(old)
	b.index.Repo(ctx, r)
	if s := SchedulerFrom(ctx); s != nil {
		s.Resync(r) // in r's own serialization
		return nil
	}
	o, err := b.Reconcile(ctx, r)
	out.Add(o)
	return err
}

// variantsFor returns the variants that target rc's repository (see
// index.VariantsFor); the problems of the sets in rc's repository go to
// rc's outcome.
func (b *Bot) variantsFor(ctx context.Context, rc *repoCtx) ([]config.PackageVariant, error) {
	vs, probs, err := b.index.VariantsFor(ctx, rc.repo, rc.cfg, rc.spec)
	if err != nil {
		return nil, err
	}
	for _, p := range probs {
		rc.out.Problems = append(rc.out.Problems, Problem{Severity: SeverityError, Repo: p.Repo, File: p.File, Message: p.Message})
	}
	return vs, nil
}

// fetcher is the engine's Fetcher for rc's packages.
func (b *Bot) fetcher(ctx context.Context, rc *repoCtx) (*index.Fetcher, error) {
	return b.index.Fetcher(ctx, rc.f, rc.repo)
}

// followers are the repositories with a variant of upstream's package pkg
// that may read it (see index.Followers).
func (b *Bot) followers(ctx context.Context, upstream forge.Repo, pkg string) ([]forge.Repo, error) {
	return b.index.Followers(ctx, upstream, pkg)
}
