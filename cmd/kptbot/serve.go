package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/gitlab"
	"github.com/kptbot/kptbot/server"
)

// maxWebhookBody bounds a delivery (GitHub caps payloads at 25 MB).
const maxWebhookBody = 25 << 20

// httpLimits are the webhook server's timeouts and connection cap.
var httpLimits = server.DefaultHTTPLimits

// app is everything built from a server configuration: the forges, the
// bot, the webhook parsers and what a resync covers.
type app struct {
	cfg     *config.Server
	forges  map[string]forge.Forge
	bot     *bot.Bot
	parsers map[string]server.WebhookParser
	// secrets per forge, for replay.
	secrets map[string][]byte
	repos   func(ctx context.Context) ([]forge.Repo, error)
}

func newApp(ctx context.Context, cfg *config.Server, log *slog.Logger, reg prometheus.Registerer, dryRun bool) (*app, error) {
	logins := map[string]string{}
	a := &app{cfg: cfg, forges: map[string]forge.Forge{}, parsers: map[string]server.WebhookParser{}, secrets: map[string][]byte{}}
	var listers []func(ctx context.Context) ([]forge.Repo, error)
	if g := cfg.GitHub; g != nil {
		f, list, err := githubForge(cfg, g, reg)
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
			login, err := githubLogin(ctx, f)
			if err != nil {
				return nil, fmt.Errorf("github: finding the bot's login (or set botLogin): %w", err)
			}
			logins[forge.GitHub] = login
		}
		a.forges[forge.GitHub], a.secrets[forge.GitHub] = f, secret
		a.parsers[forge.GitHub] = func(r *http.Request) (forge.Event, error) {
			ev, err := github.ParseWebhook(r, secret, maxWebhookBody)
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
		a.forges[forge.GitLab], a.secrets[forge.GitLab] = c, secret
		a.parsers[forge.GitLab] = func(r *http.Request) (forge.Event, error) { return gitlab.ParseWebhook(r, secret, maxWebhookBody) }
		listers = append(listers, projectLister(c, g.Projects))
	}
	b, err := bot.New(bot.Options{Forges: a.forges, Name: cfg.BotName, Login: cfg.BotLogin, Logins: logins, Logger: log, DryRun: dryRun,
		FanOutByDispatch: cfg.FanOut == "dispatch", Registry: reg,
		Functions: bot.Policy{AllowExec: cfg.Functions.AllowExec, AllowContainers: cfg.Functions.AllowContainers, AllowedImages: cfg.Functions.AllowedImages}})
	if err != nil {
		return nil, err
	}
	a.bot = b
	a.repos = func(ctx context.Context) ([]forge.Repo, error) {
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

// githubLogin is the account the GitHub side acts as.
func githubLogin(ctx context.Context, f forge.Forge) (string, error) {
	switch c := f.(type) {
	case *github.AppForge:
		return c.Login(ctx)
	case *github.Client:
		u, err := c.Self(ctx)
		return u.Login, err
	}
	return "", fmt.Errorf("unknown GitHub client %T", f)
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
// token; and what a resync covers.
func githubForge(cfg *config.Server, g *config.GitHubServer, reg prometheus.Registerer) (forge.Forge, func(context.Context) ([]forge.Repo, error), error) {
	metrics, err := github.NewMetrics(reg)
	if err != nil {
		return nil, nil, err
	}
	if g.AppID != 0 {
		key, err := cfg.Secret(g.PrivateKeyFile, config.EnvGitHubPrivateKey)
		if err != nil {
			return nil, nil, fmt.Errorf("github private key: %w", err)
		}
		f, err := github.NewAppForge(g.AppID, key, g.BaseURL, func(c *github.Client, id int64) {
			c.Instrument(metrics, fmt.Sprintf("installation-%d", id))
		})
		if err != nil {
			return nil, nil, err
		}
		return f, f.ListRepos, nil
	}
	token, err := cfg.Secret(g.TokenFile, config.EnvGitHubToken)
	if err != nil || len(token) == 0 {
		return nil, nil, fmt.Errorf("github: appID + privateKeyFile, or tokenFile (or $%s), is required: %v", config.EnvGitHubToken, err)
	}
	c, err := github.NewTokenClient(string(token), g.BaseURL)
	if err != nil {
		return nil, nil, err
	}
	c.Instrument(metrics, "token")
	if len(g.Repositories) == 0 {
		return c, c.ListRepos, nil
	}
	return c, projectLister(c, g.Repositories), nil
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

func newLogger(level string, w *os.File) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func newServeCmd() *cobra.Command {
	var cfgPath, level string
	cmd := &cobra.Command{
		Use:   "serve --config FILE",
		Short: "Run the webhook server: the bot on GitHub and GitLab pull requests",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.LoadServer(cfgPath)
			if err != nil {
				return err
			}
			log, err := newLogger(level, os.Stderr)
			if err != nil {
				return err
			}
			reg := prometheus.NewRegistry()
			reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
			a, err := newApp(cmd.Context(), cfg, log, reg, false)
			if err != nil {
				return err
			}
			srv := server.New(server.Options{Handler: a.bot, Parsers: a.parsers, Repos: a.repos, ResyncInterval: cfg.Resync,
				Workers: cfg.Workers, QueueSize: cfg.QueueSize, Logger: log, Registry: reg, MaxBody: maxWebhookBody})
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			l, err := net.Listen("tcp", cfg.Listen)
			if err != nil {
				return fmt.Errorf("listening on %s: %w", cfg.Listen, err)
			}
			hs := srv.HTTPServer(httpLimits)
			errc := make(chan error, 1)
			go func() { errc <- hs.Serve(server.LimitListener(l, httpLimits.MaxConns)) }()
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx) }()
			log.Info("kptbot serving", "listen", cfg.Listen, "forges", len(a.forges), "workers", cfg.Workers)
			select {
			case err := <-errc:
				stop()
				<-done
				return fmt.Errorf("listening on %s: %w", cfg.Listen, err)
			case <-ctx.Done():
			}
			shut, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = hs.Shutdown(shut)
			return <-done // drains queued work
		},
	}
	cmd.Flags().StringVar(&cfgPath, "config", "", "server configuration file (see README: Server configuration)")
	cmd.Flags().StringVar(&level, "log-level", "info", "debug, info, warn or error")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

func newReplayCmd() *cobra.Command {
	var cfgPath, forgeName, event, level string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "replay --config FILE --forge github|gitlab --event TYPE PAYLOAD.json",
		Short: "Run one recorded webhook payload through the bot, as the server would",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := config.LoadServer(cfgPath)
			if err != nil {
				return err
			}
			log, err := newLogger(level, os.Stderr)
			if err != nil {
				return err
			}
			a, err := newApp(cmd.Context(), cfg, log, prometheus.NewRegistry(), dryRun)
			if err != nil {
				return err
			}
			ev, err := a.replayEvent(forgeName, event, args[0])
			if err != nil {
				return err
			}
			out, err := a.bot.Handle(cmd.Context(), ev)
			if werr := writeJSONTo(cmd.OutOrStdout(), out); werr != nil {
				return werr
			}
			return err
		},
	}
	cmd.Flags().StringVar(&cfgPath, "config", "", "server configuration file")
	cmd.Flags().StringVar(&forgeName, "forge", forge.GitHub, "github or gitlab")
	cmd.Flags().StringVar(&event, "event", "", "event type: X-GitHub-Event (pull_request, issue_comment, ...) or X-Gitlab-Event (\"Merge Request Hook\", ...)")
	cmd.Flags().StringVar(&level, "log-level", "info", "debug, info, warn or error")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "compute and print the outcome without writing to the forge")
	_ = cmd.MarkFlagRequired("config")
	_ = cmd.MarkFlagRequired("event")
	return cmd
}

// replayEvent parses a recorded payload through the same normalizer a
// delivery goes through (GitLab's, with the configured token).
func (a *app) replayEvent(forgeName, event, file string) (forge.Event, error) {
	body, err := os.ReadFile(file)
	if err != nil {
		return forge.Event{}, fmt.Errorf("reading payload: %w", err)
	}
	secret, ok := a.secrets[forgeName]
	if !ok {
		return forge.Event{}, fmt.Errorf("--forge %q is not configured in the server config", forgeName)
	}
	id := "replay-" + filepath.Base(file)
	switch forgeName {
	case forge.GitHub:
		// A file on the operator's disk needs no signature check.
		return github.Normalize(event, id, body)
	case forge.GitLab:
		req, _ := http.NewRequest(http.MethodPost, "/webhooks/gitlab", strings.NewReader(string(body)))
		req.Header.Set(gitlab.HeaderEvent, event)
		req.Header.Set(gitlab.HeaderToken, string(secret))
		req.Header.Set(gitlab.HeaderIdempotencyKey, id)
		return gitlab.ParseWebhook(req, secret, maxWebhookBody)
	}
	return forge.Event{}, fmt.Errorf("--forge %q: want github or gitlab", forgeName)
}
