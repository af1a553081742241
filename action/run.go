// Package action is `kptbot action`: kptbot as a step of a GitHub Actions
// workflow or a GitLab CI job. It reads the CI system's environment (which
// platform, the action's inputs, the repository, the triggering event),
// runs the same bot the webhook server runs (Handle for the event,
// Reconcile for the repository), and reports the way each platform expects:
// step outputs, a Markdown step summary and workflow-command annotations on
// GitHub; dotenv and JSON report artifacts and plain log lines on GitLab.
//
// The package knows nothing of how the bot is built: the caller passes a
// NewBot function, so tests run it with a recording Bot.
package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
)

// Bot is what a run drives: the two entry points of *bot.Bot.
type Bot interface {
	Handle(ctx context.Context, ev forge.Event) (bot.Outcome, error)
	Reconcile(ctx context.Context, repo forge.Repo) (bot.Outcome, error)
}

// Setup is what NewBot needs to build the bot for a run.
type Setup struct {
	// Forge is forge.GitHub or forge.GitLab.
	Forge string
	// APIURL is the forge's API root for the client.
	APIURL string
	// ServerURL is the forge's web and git root (https://github.com, a
	// GitHub Enterprise Server or GitLab host): the prefix of clone URLs for
	// repositories that come without one.
	ServerURL string
	// Token authenticates to the forge. Never log it (LogValue omits it).
	Token string
	// Repo is the repository of the run.
	Repo forge.Repo
	// Config is the kptbot.yaml path input ("" for the usual places).
	Config string
	// DryRun asks for a bot that plans and reports but writes nothing.
	DryRun bool
	// BotLogin is the bot-login input: the token's account on GitHub
	// (empty: GITHUB_TOKEN's github-actions[bot]).
	BotLogin string
	// FanOutDispatch asks the bot to tell each follower's own CI about a
	// publish instead of opening its change from this job.
	FanOutDispatch bool
	// SingleWrite opens or moves each change the bot opens for a variant
	// in one REST write (the write-mode input; docs/configuration.md).
	SingleWrite bool
	// Workspace is the job's checkout, when it has one.
	Workspace string
	// Logger logs at the level the log-level input chose, to stderr.
	Logger *slog.Logger
}

// LogValue keeps the token out of logs.
func (s Setup) LogValue() slog.Value {
	return slog.GroupValue(slog.String("forge", s.Forge), slog.String("api", s.APIURL),
		slog.String("repo", s.Repo.FullName), slog.Bool("dryRun", s.DryRun))
}

// Options configures Run.
type Options struct {
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
	// Stdout receives workflow commands and result lines; Stderr the log.
	Stdout, Stderr io.Writer
	// NewBot builds the bot for the run.
	NewBot func(ctx context.Context, s Setup) (Bot, error)
}

// Run is one `kptbot action`: detect, run the bot, report. It returns the
// combined outcome, and an error when the step should fail: the
// environment is unusable, the bot failed, or it reported error problems
// (after the outputs and summary are written, so a failing step still says
// what it did).
func Run(ctx context.Context, o Options) (bot.Outcome, error) {
	env, err := Detect(o.Getenv)
	if err != nil {
		// The platform is unknown if detection failed; a workflow command
		// is harmless text elsewhere and an annotation on GitHub.
		if o.Getenv("GITHUB_ACTIONS") == "true" {
			fmt.Fprintln(o.Stdout, command("error", nil, "kptbot: "+err.Error()))
		}
		return bot.Outcome{}, err
	}
	logger := slog.New(slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: env.Inputs.LogLevel}))
	logger.Info("kptbot action", "env", env, "trigger", env.Trigger.Reason)
	forgeName := forge.GitHub
	if env.Platform == GitLabCI {
		forgeName = forge.GitLab
	}
	b, err := o.NewBot(ctx, Setup{
		Forge: forgeName, APIURL: env.APIURL, ServerURL: env.ServerURL, Token: env.Inputs.Token, Repo: env.Repo,
		Config: env.Inputs.Config, DryRun: env.Inputs.DryRun, Workspace: env.Workspace, Logger: logger,
		BotLogin: env.Inputs.BotLogin, FanOutDispatch: env.Inputs.FanOut == FanOutDispatch,
		SingleWrite: env.Inputs.WriteMode == config.WriteSingle,
	})
	if err != nil {
		err = fmt.Errorf("setting up the bot: %w", err)
		report(o.Stdout, env, bot.Outcome{}, []error{err})
		return bot.Outcome{}, err
	}
	out, runErrs := execute(ctx, b, env, logger)
	werr := report(o.Stdout, env, out, runErrs)
	errs := append(runErrs, werr)
	if n := countErrors(out); n > 0 {
		errs = append(errs, fmt.Errorf("%d error(s) reported (see the annotations and the summary)", n))
	}
	return out, errors.Join(errs...)
}

// execute runs the bot as the mode says: the event (unless the mode is
// reconcile), then a reconcile (unless the mode is event; a resync trigger
// is a reconcile in every mode). A failed Handle does not skip the
// reconcile: the reconcile is what repairs.
func execute(ctx context.Context, b Bot, env Env, logger *slog.Logger) (bot.Outcome, []error) {
	var out bot.Outcome
	var errs []error
	mode, t := env.Inputs.Mode, env.Trigger
	if mode != ModeReconcile && t.Event != nil {
		if t.Event.Kind == forge.EventIgnored {
			out.Skipped = "event ignored: " + t.Event.Ignored
			logger.Info("event ignored", "reason", t.Event.Ignored)
		} else {
			o, err := b.Handle(ctx, *t.Event)
			out.Add(o)
			if err != nil {
				errs = append(errs, fmt.Errorf("handling %s: %w", t.Reason, err))
			}
		}
	}
	if mode == ModeEvent && !t.Resync() {
		return out, errs
	}
	if err := ctx.Err(); err != nil {
		return out, append(errs, fmt.Errorf("reconciling %s: %w", env.Repo.FullName, err))
	}
	o, err := b.Reconcile(ctx, env.Repo)
	out.Add(o)
	if err != nil {
		errs = append(errs, fmt.Errorf("reconciling %s: %w", env.Repo.FullName, err))
	}
	return out, errs
}

func countErrors(out bot.Outcome) int {
	n := 0
	for _, p := range out.Problems {
		if p.Severity != bot.SeverityWarning {
			n++
		}
	}
	return n
}

// report writes the platform's results; the error is about the writing.
func report(stdout io.Writer, env Env, out bot.Outcome, runErrs []error) error {
	if env.Platform == GitLabCI {
		return reportGitLab(stdout, env, out, runErrs)
	}
	return reportGitHub(stdout, env, out, runErrs)
}
