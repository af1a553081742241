package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/ratelimit"
	"github.com/kptbot/kptbot/index"
	"github.com/kptbot/kptbot/porch"
)

// Options configures a Bot.
type Options struct {
	// Forges maps a forge name (forge.GitHub, forge.GitLab) to its
	// identity there: forge.Static of a token's client, or a GitHub App.
	Forges map[string]forge.Resolver
	// Name is what commands address: /Name and @Name.
	Name string
	// Login is the bot's own account (e.g. "kptbot[bot]"): its comments
	// are never commands, and only its comments hold trusted state.
	Login string
	// Logins overrides Login per forge name: the bot is one account on
	// each forge (on GitLab the token's user, e.g. project_42_bot_1a2b).
	Logins    map[string]string
	Functions Policy
	Logger    *slog.Logger
	// ConfigPath is where kptbot.yaml lives in every repository, when not
	// in one of the usual places (kptbot.yaml, .github/, .gitlab/).
	ConfigPath string
	// Registry receives the bot's metrics (fan-out progress); nil keeps
	// them unregistered.
	Registry prometheus.Registerer
	// NewFanOut makes what brings a package's followers up to date after
	// a publish or a tag push, given the bot (package fanout provides it;
	// nil: nothing fans out).
	NewFanOut func(*Bot) (FanOuter, error)
	// FanOutByDispatch makes a fan-out tell each following repository
	// (repository_dispatch / a pipeline) instead of changing it, so each
	// downstream's own CI job updates itself (DESIGN §6).
	FanOutByDispatch bool
	// SingleWrite makes each change the bot opens or moves for a variant
	// cost one REST write (the server configuration's writeMode: single):
	// the render result goes in the change's description instead of a
	// check, unless the base branch's protection requires the check; no
	// labels on GitHub, whose create call takes none.
	SingleWrite bool
	// DryRun computes and reports what would be done without writing.
	DryRun bool
	// RenderTimeout is each package render's time budget (zero:
	// DefaultRenderTimeout). A render over budget fails its check; the
	// worker moves on.
	RenderTimeout time.Duration
	// MaxTreeFiles and MaxTreeBytes cap what one tree read of a change
	// may hold (zero: DefaultMaxTreeFiles, DefaultMaxTreeBytes); a change
	// over the cap is reported on the change and not rendered.
	MaxTreeFiles int
	MaxTreeBytes int64
}

// Bot is kptbot on forges. It keeps no state of its own: everything is
// read back from git and the forge on every event, so replicas are safe.
type Bot struct {
	opts  Options
	log   *slog.Logger
	index *index.Index
	// mergeWaits space the retries of a merge refused while the forge
	// computes mergeability.
	mergeWaits []time.Duration
	// fanOut brings followers up to date after a publish (nil: none).
	fanOut FanOuter
}

// New returns a Bot.
func New(opts Options) (*Bot, error) {
	if len(opts.Forges) == 0 {
		return nil, errors.New("bot: at least one forge is required")
	}
	if opts.Name == "" {
		opts.Name = "kptbot"
	}
	if opts.Login == "" {
		opts.Login = opts.Name + "[bot]"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Bot{opts: opts, log: log, mergeWaits: defaultMergeWaits()}
	b.index = b.newIndex()
	if opts.NewFanOut != nil {
		fo, err := opts.NewFanOut(b)
		if err != nil {
			return nil, err
		}
		b.fanOut = fo
	}
	return b, nil
}

// login is the bot's own account on forge f.
func (b *Bot) login(f string) string {
	if l := b.opts.Logins[f]; l != "" {
		return l
	}
	return b.opts.Login
}

// configPaths are where this bot looks for kptbot.yaml.
func (b *Bot) configPaths() []string {
	if b.opts.ConfigPath != "" {
		return []string{strings.TrimPrefix(b.opts.ConfigPath, "/")}
	}
	return config.Locations()
}

// ErrBadConfig is a kptbot.yaml on the default branch that does not parse:
// the bot does nothing in that repository until it is fixed.
var ErrBadConfig = errors.New("kptbot.yaml on the default branch is invalid")

// repoCtx is one repository being worked on: its forge, settings and the
// outcome collected so far.
type repoCtx struct {
	f    forge.Forge
	repo forge.Repo
	cfg  *config.File
	// cfgPath is where the config was read from ("" when absent).
	cfgPath string
	spec    config.RepositorySpec
	out     *Outcome
	// published are packages given a new revision while working on the
	// repository: withRepo fans each out when the work is done.
	published []string
	// fanOut is fan-out progress to show on the dashboard: package →
	// its section (rendered by the fan-out).
	fanOut map[string]string
	// required are the checks the default branch requires (nil: not
	// read yet; see requiredChecks).
	required []string
}

// forgeFor resolves the forge acting on r (a GitHub App: the installation
// holding it); callers resolve once per work item and keep the result.
func (b *Bot) forgeFor(ctx context.Context, r forge.Repo) (forge.Forge, error) {
	res, ok := b.opts.Forges[r.Forge]
	if !ok {
		return forge.Forge{}, fmt.Errorf("repository %s is on forge %q, which this bot is not configured for", r.FullName, r.Forge)
	}
	f, err := res.For(ctx, r)
	if err != nil {
		return forge.Forge{}, fmt.Errorf("repository %s: %w", r.FullName, err)
	}
	return f, nil
}

// open loads a repository's configuration from its default branch (never
// from a change's head, so a change cannot alter the rules it is judged by).
func (b *Bot) open(ctx context.Context, r forge.Repo, out *Outcome) (*repoCtx, error) {
	f, err := b.forgeFor(ctx, r)
	if err != nil {
		return nil, err
	}
	return b.openWith(ctx, f, r, out)
}

// openWith is open on an already resolved forge.
func (b *Bot) openWith(ctx context.Context, f forge.Forge, r forge.Repo, out *Outcome) (*repoCtx, error) {
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	rc := &repoCtx{f: f, repo: r, out: out, cfg: &config.File{}}
	for _, p := range b.configPaths() {
		data, err := f.ReadFile(ctx, r, r.DefaultBranch, p)
		if errors.Is(err, forge.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s from %s@%s: %w", p, r.FullName, r.DefaultBranch, err)
		}
		cfg, err := config.Parse(p, data)
		if err != nil {
			out.Problems = append(out.Problems, configProblems(r.FullName, err)...)
			return nil, fmt.Errorf("%w: %s: %w", ErrBadConfig, r.FullName, err)
		}
		rc.cfg, rc.cfgPath = cfg, p
		break
	}
	rc.cfg = config.Defaults(rc.cfg)
	rc.spec = rc.cfg.Repository.Spec
	if rc.spec.Branch != "" {
		rc.repo.DefaultBranch = rc.spec.Branch
	}
	return rc, nil
}

// configProblems turns config parse errors into Problems at their lines.
func configProblems(repo string, err error) []Problem {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return []Problem{{Severity: SeverityError, Repo: repo, Message: err.Error()}}
	}
	out := make([]Problem, 0, len(ce.Problems))
	for _, p := range ce.Problems {
		msg := p.Message
		if p.Field != "" {
			msg = p.Field + ": " + msg
		}
		out = append(out, Problem{Severity: SeverityError, Repo: repo, File: p.File, Line: p.Line, Message: msg})
	}
	return out
}

// pkgName is a package's name, pkgDir its directory, and packagesIn a
// tree's packages, under the repository's package directory (porch's
// layout rules).
func (rc *repoCtx) pkgName(dir string) string { return porch.PackagePath(rc.spec.Directory, dir) }
func (rc *repoCtx) pkgDir(name string) string { return porch.PackageDir(rc.spec.Directory, name) }
func (rc *repoCtx) packagesIn(files map[string][]byte) []string {
	return porch.PackagesIn(rc.spec.Directory, files)
}

// Handle processes one normalized event. Events are hints: the bot reads
// the current state of the change or repository and converges it, so a
// redelivered or out-of-order event does no harm.
func (b *Bot) Handle(ctx context.Context, ev forge.Event) (Outcome, error) {
	var out Outcome
	log := b.log.With("delivery", ev.DeliveryID, "repo", ev.Repo.FullName, "event", string(ev.Kind))
	if ev.Change != nil {
		log = log.With("change", ev.Change.Number)
	}
	if isSelf(ev.Sender, b.login(ev.Repo.Forge)) {
		// This includes the "closed" delivery of the bot's own merge:
		// the run that merged publishes (tags, deletes the branch) before
		// it returns, so evaluating again here would publish twice. A run
		// that dies between merge and tag leaves the branch (it is deleted
		// after the tags): its event's retry and the resync (recoverMerged)
		// finish that publish.
		out.Skipped = "event caused by the bot itself"
		return out, nil
	}
	// A person's action (a command, a review, a push) goes before bulk
	// work in the identity's write queue; fan-outs mark themselves Bulk.
	ctx = ratelimit.WithPriority(ctx, ratelimit.Interactive)
	number := 0
	if ev.Change != nil {
		number = ev.Change.Number
	}
	err := b.recovering(ctx, ev.Repo, number, func() error { return b.dispatch(ctx, ev, &out) })
	if err != nil {
		log.Error("handling event failed", "err", err)
	} else {
		pkgs := map[string]bool{}
		for _, c := range out.Checks {
			if c.Package != "" {
				pkgs[c.Package] = true
			}
		}
		names := make([]string, 0, len(pkgs))
		for p := range pkgs {
			names = append(names, p)
		}
		sort.Strings(names)
		log.Info("handled event", "packages", names, "opened", len(out.Opened), "merged", len(out.Merged), "tags", len(out.Tags), "checks", len(out.Checks), "skipped", out.Skipped)
	}
	return out, err
}

// dispatch routes one event to its handler.
func (b *Bot) dispatch(ctx context.Context, ev forge.Event, out *Outcome) error {
	var err error
	switch ev.Kind {
	case forge.EventPing:
		out.Skipped = "ping"
	case forge.EventIgnored:
		out.Skipped = "ignored: " + ev.Ignored
	case forge.EventCommentEdited:
		out.Skipped = "edited comments are never read as commands"
	case forge.EventCommentCreated:
		err = b.onComment(ctx, ev, out)
	case forge.EventChangeOpened, forge.EventChangeSynchronized, forge.EventChangeReopened, forge.EventChangeEdited,
		forge.EventChangeReadyForReview, forge.EventChangeConvertedToDraft, forge.EventReviewSubmitted,
		forge.EventReviewDismissed, forge.EventApproved, forge.EventUnapproved:
		err = b.onChange(ctx, ev, out)
	case forge.EventChangeMerged, forge.EventChangeClosed:
		if ev.Change == nil {
			out.Skipped = "close event without a change"
			break
		}
		err = b.withRepo(ctx, ev.Repo, out, func(rc *repoCtx) error { return b.afterClose(ctx, rc, ev.Change.Number) })
	case forge.EventBranchPushed:
		if strings.TrimPrefix(ev.Ref, "refs/heads/") != ev.Repo.DefaultBranch {
			out.Skipped = "push to a branch other than the default branch"
			break
		}
		// kptbot.yaml may have changed: the index entry and the
		// repository's variants follow.
		b.index.Repo(ctx, ev.Repo)
		err = b.withRepo(ctx, ev.Repo, out, func(rc *repoCtx) error { return b.reconcile(ctx, rc) })
	case forge.EventTagPushed:
		err = b.onTag(ctx, ev, out)
	case forge.EventCheckRerequested:
		err = b.withRepo(ctx, ev.Repo, out, func(rc *repoCtx) error { return b.reconcile(ctx, rc) })
	case forge.EventInstallationAdded:
		for _, r := range ev.Repos {
			r.Forge = ev.Forge
			b.index.Repo(ctx, r)
			if s := SchedulerFrom(ctx); s != nil {
				s.Resync(r) // in r's own serialization
				continue
			}
			o, rerr := b.Reconcile(ctx, r)
			out.Add(o)
			err = errors.Join(err, rerr)
		}
	case forge.EventInstallationRemoved:
		for _, r := range ev.Repos {
			r.Forge = ev.Forge
			b.index.Unindex(r)
		}
	case forge.EventRepoRenamed:
		err = b.onRenamed(ctx, ev, out)
	case forge.EventTagDeleted:
		b.index.ForgetTags(ev.Repo)
		out.Skipped = "tag deleted"
	default:
		out.Skipped = fmt.Sprintf("nothing to do for %s", ev.Kind)
	}
	return err
}

// Reconcile converges one repository: every open change is re-rendered and
// re-evaluated, merged changes whose tags are missing (a crash between
// merge and tag) are tagged, and the dashboard is refreshed.
func (b *Bot) Reconcile(ctx context.Context, r forge.Repo) (Outcome, error) {
	ctx = ratelimit.WithPriority(ctx, ratelimit.Bulk)
	var out Outcome
	err := b.withRepo(ctx, r, &out, func(rc *repoCtx) error { return b.reconcile(ctx, rc) })
	return out, err
}

// withRepo opens repository r and runs fn on it. A revision published
// meanwhile is an upstream tag for whoever follows it: the followers are
// brought up to date after fn, whatever else fn ran into.
func (b *Bot) withRepo(ctx context.Context, r forge.Repo, out *Outcome, fn func(*repoCtx) error) error {
	rc, err := b.open(ctx, r, out)
	if err != nil {
		return err
	}
	err = fn(rc)
	for _, pkg := range rc.published {
		o, _, ferr := b.FanOut(ctx, rc.repo, pkg)
		out.Add(o)
		if ferr != nil {
			out.Problems = append(out.Problems, Problem{Severity: SeverityWarning, Repo: rc.repo.FullName, Package: pkg, Message: "fan-out: " + ferr.Error()})
		}
	}
	return err
}

func (b *Bot) reconcile(ctx context.Context, rc *repoCtx) error {
	changes, err := rc.f.ListOpenChanges(ctx, rc.repo)
	if err != nil {
		return err
	}
	var errs []error
	heads := map[string]bool{}
	for _, c := range changes {
		heads[c.HeadRef] = true
		number := c.Number
		if err := b.recovering(ctx, rc.repo, number, func() error { return b.syncChange(ctx, rc, number, forge.Event{}) }); err != nil {
			errs = append(errs, fmt.Errorf("%s#%d: %w", rc.repo.FullName, c.Number, err))
		}
	}
	if err := b.recoverMerged(ctx, rc, heads); err != nil {
		errs = append(errs, err)
	}
	if _, err := b.reconcileVariants(ctx, rc, nil); err != nil {
		errs = append(errs, err)
	}
	if err := b.dashboard(ctx, rc); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// recoverMerged finishes publishing changes that were merged but whose
// branch still exists: the bot deletes a branch only after tagging, so a
// branch with a merged change means the tag may be missing.
func (b *Bot) recoverMerged(ctx context.Context, rc *repoCtx, openHeads map[string]bool) error {
	branches, err := rc.f.ListBranches(ctx, rc.repo)
	if err != nil {
		return err
	}
	var errs []error
	for _, br := range branches {
		if br.Name == rc.repo.DefaultBranch || openHeads[br.Name] {
			continue
		}
		cs, err := rc.f.ListChangesByHead(ctx, rc.repo, br.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, c := range cs {
			if c.Merged && c.HeadSHA == br.SHA {
				errs = append(errs, b.afterClose(ctx, rc, c.Number))
			}
		}
	}
	return errors.Join(errs...)
}
