package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kptbot/kptbot/action"
	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/fanout"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/gitlab"
)

// newBot is the one place a bot is made, for serve, replay, plan, action
// and demo alike: the bot with its fan-out.
func newBot(opts bot.Options) (*bot.Bot, error) {
	if opts.NewFanOut == nil {
		opts.NewFanOut = fanout.For(opts.Registry, opts.Logger)
	}
	return bot.New(opts)
}

// NewDemoBot is the bot `kptbot demo` runs on an in-memory forge.
func NewDemoBot(f forge.Resolver, login string) (*bot.Bot, error) {
	return newBot(bot.Options{Forges: map[string]forge.Resolver{forge.GitHub: f}, Name: "kptbot", Login: login})
}

// Server is the server `kptbot serve` runs for a; the configuration's resync,
// workers and queue size apply.
func (a *App) Server(log *slog.Logger, reg *prometheus.Registry) *Server {
	return New(Options{Handler: a.Bot, Parsers: a.Parsers, Repos: a.Repos, ResyncInterval: a.Config.Resync,
		Workers: a.Config.Workers, QueueSize: a.Config.QueueSize, Logger: log, Registry: reg, MaxBody: MaxWebhookBody,
		LowerWorkerPriority: true})
}

// MaxWebhookBody bounds a delivery (GitHub caps payloads at 25 MB).
const MaxWebhookBody = 25 << 20

// App is everything built from a server configuration: the forges, the
// bot, the webhook parsers and what a resync covers. `kptbot serve`,
// `replay` and `plan` build one; `action` and `demo` build their bot with
// NewActionBot and NewDemoBot, through the same newBot.
type App struct {
	Config  *config.Server
	Forges  map[string]forge.Resolver
	Bot     *bot.Bot
	Parsers map[string]WebhookParser
	// Secrets per forge, for replay.
	Secrets map[string][]byte
	// Repos is what a resync covers.
	Repos func(ctx context.Context) ([]forge.Repo, error)
}

// NewApp builds the forges, the bot and the webhook parsers a server
// configuration describes (dryRun: the bot writes nothing).
func NewApp(ctx context.Context, cfg *config.Server, log *slog.Logger, reg prometheus.Registerer, dryRun bool) (*App, error) {
	logins := map[string]string{}
	a := &App{Config: cfg, Forges: map[string]forge.Resolver{}, Parsers: map[string]WebhookParser{}, Secrets: map[string][]byte{}}
	var listers []func(ctx context.Context) ([]forge.Repo, error)
	if g := cfg.GitHub; g != nil {
		f, self, list, err := githubForge(cfg, g, reg)
		if err != nil {
			return nil, err
		}
		secret, err := webhookSecret(cfg, forge.GitHub, g.WebhookSecretFile, config.EnvGitHubWebhookSecret)
		if err != nil {
			return nil, err
		}
		if cfg.BotLogin == "" {
			// The bot trusts only comments by its own account, so it must
			// know it: ask GitHub rather than guess.
			login, err := self(ctx)
			if err != nil {
				return nil, fmt.Errorf("github: finding the bot's login (or set botLogin): %w", err)
			}
			logins[forge.GitHub] = login
		}
		a.Forges[forge.GitHub], a.Secrets[forge.GitHub] = f, secret
		a.Parsers[forge.GitHub] = func(r *http.Request) (forge.Event, error) {
			ev, err := github.ParseWebhook(r, secret, MaxWebhookBody)
			if app, ok := f.(*github.AppForge); ok && err == nil {
				app.Remember(ev.Repo.FullName, ev.InstallationID)
			}
			return ev, err
		}
		listers = append(listers, list)
	}
	if g := cfg.GitLab; g != nil {
		token, err := cfg.Secret(g.TokenFile, config.EnvGitLabToken)
		if err != nil || len(token) == 0 {
			return nil, fmt.Errorf("gitlab: tokenFile (or $%s) is required: %v", config.EnvGitLabToken, err)
		}
		c, err := gitlab.NewClient(nil, g.BaseURL, string(token))
		if err != nil {
			return nil, err
		}
		secret, err := webhookSecret(cfg, forge.GitLab, g.WebhookSecretFile, config.EnvGitLabWebhookSecret)
		if err != nil {
			return nil, err
		}
		// On GitLab the bot is the token's user: its notes hold the
		// bot's state, so it must know its own name.
		self, err := c.Self(ctx)
		if err != nil {
			return nil, fmt.Errorf("gitlab: reading the token's user: %w", err)
		}
		logins[forge.GitLab] = self.Login
		a.Forges[forge.GitLab], a.Secrets[forge.GitLab] = forge.Static(c), secret
		a.Parsers[forge.GitLab] = func(r *http.Request) (forge.Event, error) { return gitlab.ParseWebhook(r, secret, MaxWebhookBody) }
		listers = append(listers, projectLister(c, g.Projects))
	}
	b, err := newBot(bot.Options{Forges: a.Forges, Name: cfg.BotName, Login: cfg.BotLogin, Logins: logins, Logger: log, DryRun: dryRun,
		FanOutByDispatch: cfg.FanOut == "dispatch", SingleWrite: cfg.WriteMode == config.WriteSingle, Registry: reg,
		Functions: bot.Policy{AllowExec: cfg.Functions.AllowExec, AllowContainers: cfg.Functions.AllowContainers, AllowedImages: cfg.Functions.AllowedImages}})
	if err != nil {
		return nil, err
	}
	a.Bot = b
	a.Repos = func(ctx context.Context) ([]forge.Repo, error) {
		var all []forge.Repo
		var errs []error
		for _, l := range listers {
			rs, err := l(ctx)
			all = append(all, rs...)
			errs = append(errs, err)
		}
		return all, errors.Join(errs...)
	}
	return a, nil
}

// webhookSecret reads a forge's webhook secret, which is required: a
// delivery that cannot be verified is never accepted.
func webhookSecret(cfg *config.Server, forgeName, file, env string) ([]byte, error) {
	secret, err := cfg.Secret(file, env)
	if err != nil {
		return nil, fmt.Errorf("%s webhook secret: %w", forgeName, err)
	}
	if len(secret) == 0 {
		return nil, fmt.Errorf("%s: webhookSecretFile (or $%s) is required: deliveries that cannot be verified are never accepted", forgeName, env)
	}
	return secret, nil
}

// githubForge builds the GitHub side: every installation of an App, or one
// token; the account it acts as; and what a resync covers.
func githubForge(cfg *config.Server, g *config.GitHubServer, reg prometheus.Registerer) (forge.Resolver, func(context.Context) (string, error), func(context.Context) ([]forge.Repo, error), error) {
	metrics, err := github.NewMetrics(reg)
	if err != nil {
		return nil, nil, nil, err
	}
	if g.AppID != 0 {
		key, err := cfg.Secret(g.PrivateKeyFile, config.EnvGitHubPrivateKey)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("github private key: %w", err)
		}
		f, err := github.NewAppForge(g.AppID, key, g.BaseURL, func(c *github.Client, id int64) {
			c.Instrument(metrics, fmt.Sprintf("installation-%d", id))
		})
		if err != nil {
			return nil, nil, nil, err
		}
		return f, f.Login, f.ListRepos, nil
	}
	token, err := cfg.Secret(g.TokenFile, config.EnvGitHubToken)
	if err != nil || len(token) == 0 {
		return nil, nil, nil, fmt.Errorf("github: appID + privateKeyFile, or tokenFile (or $%s), is required: %v", config.EnvGitHubToken, err)
	}
	c, err := github.NewTokenClient(string(token), g.BaseURL)
	if err != nil {
		return nil, nil, nil, err
	}
	c.Instrument(metrics, "token")
	self := func(ctx context.Context) (string, error) {
		u, err := c.Self(ctx)
		return u.Login, err
	}
	if len(g.Repositories) == 0 {
		return forge.Static(c), self, c.ListRepos, nil
	}
	return forge.Static(c), self, projectLister(c, g.Repositories), nil
}

// projectLister lists the named repositories among those the identity
// sees (so clone URLs and default branches come from the API).
func projectLister(l forge.RepoLister, names []string) func(context.Context) ([]forge.Repo, error) {
	return func(ctx context.Context) ([]forge.Repo, error) {
		all, err := l.ListRepos(ctx)
		if err != nil {
			return nil, err
		}
		if len(names) == 0 {
			return all, nil
		}
		want := map[string]bool{}
		for _, n := range names {
			want[strings.ToLower(n)] = true
		}
		var out []forge.Repo
		for _, r := range all {
			if want[strings.ToLower(r.FullName)] {
				out = append(out, r)
				delete(want, strings.ToLower(r.FullName))
			}
		}
		if len(want) > 0 {
			var missing []string
			for n := range want {
				missing = append(missing, n)
			}
			return out, fmt.Errorf("configured repositories the identity cannot see: %s", strings.Join(missing, ", "))
		}
		return out, nil
	}
}

// ReplayEvent parses a recorded payload through the same normalizer a
// delivery goes through.
func (a *App) ReplayEvent(forgeName, event, file string) (forge.Event, error) {
	body, err := os.ReadFile(file)
	if err != nil {
		return forge.Event{}, fmt.Errorf("reading payload: %w", err)
	}
	if _, ok := a.Secrets[forgeName]; !ok {
		return forge.Event{}, fmt.Errorf("--forge %q is not configured in the server config", forgeName)
	}
	if int64(len(body)) > MaxWebhookBody {
		return forge.Event{}, fmt.Errorf("payload %s: %w: %d bytes, limit %d", file, forge.ErrTooLarge, len(body), MaxWebhookBody)
	}
	id := "replay-" + filepath.Base(file)
	// A file on the operator's disk needs no signature or token check.
	switch forgeName {
	case forge.GitHub:
		return github.Normalize(event, id, body)
	case forge.GitLab:
		return gitlab.Normalize(event, id, body)
	}
	return forge.Event{}, fmt.Errorf("--forge %q: want github or gitlab", forgeName)
}

// NewActionBot builds the bot for one CI run (`kptbot action`) from the
// detected setup.
func NewActionBot(ctx context.Context, s action.Setup) (action.Bot, error) {
	opts := bot.Options{Name: "kptbot", Logger: s.Logger, DryRun: s.DryRun, ConfigPath: s.Config, Logins: map[string]string{},
		FanOutByDispatch: s.FanOutDispatch, SingleWrite: s.SingleWrite}
	switch s.Forge {
	case forge.GitHub:
		c, err := github.NewTokenClient(s.Token, s.APIURL)
		if err != nil {
			return nil, err
		}
		// Clone URLs come from the event; repositories named in
		// kptbot.yaml are cloned from the server's root.
		c.GitURL = s.ServerURL + "/"
		opts.Forges = map[string]forge.Resolver{forge.GitHub: forge.Static(c)}
		// The bot trusts only its own comments, so it must know its
		// account: GITHUB_TOKEN's, unless the bot-login input names the
		// App's (<app-slug>[bot]).
		opts.Login = "github-actions[bot]"
		if s.BotLogin != "" {
			opts.Login = s.BotLogin
		}
	case forge.GitLab:
		c, err := gitlab.NewClient(nil, s.APIURL, s.Token)
		if err != nil {
			return nil, err
		}
		self, err := c.Self(ctx)
		if err != nil {
			return nil, err
		}
		opts.Forges = map[string]forge.Resolver{forge.GitLab: forge.Static(c)}
		opts.Logins[forge.GitLab] = self.Login
	}
	return newBot(opts)
}
