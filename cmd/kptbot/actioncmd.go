package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/kptbot/kptbot/action"
	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/gitlab"
)

// envFanOut set to dispatch is the older spelling of the fan-out input
// (KPTBOT_FAN_OUT): a publish tells each following repository
// (repository_dispatch / a pipeline) instead of opening its change from
// this job, and each downstream's own workflow then updates it.
const envFanOut = "KPTBOT_FANOUT"

func newActionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "action",
		Short: "Run as a GitHub Actions step or GitLab CI job: handle the triggering event, then reconcile the repository",
		Long: "Reads the CI environment (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, ... or GITLAB_CI, CI_PROJECT_PATH, ...) and the INPUT_* variables of action.yml, " +
			"runs the same bot as `kptbot serve`, and writes the step's outputs, summary and annotations (GitLab: kptbot.env and reports).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := action.Run(cmd.Context(), action.Options{Getenv: os.Getenv, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr(), NewBot: actionBot})
			return err
		},
	}
}

// actionBot builds the bot for one CI run from the detected setup.
func actionBot(ctx context.Context, s action.Setup) (action.Bot, error) {
	opts := bot.Options{Name: "kptbot", Logger: s.Logger, DryRun: s.DryRun, ConfigPath: s.Config, Logins: map[string]string{},
		FanOutByDispatch: s.FanOutDispatch || os.Getenv(envFanOut) == action.FanOutDispatch}
	switch s.Forge {
	case forge.GitHub:
		c, err := github.NewTokenClient(s.Token, s.APIURL)
		if err != nil {
			return nil, err
		}
		// Clone URLs come from the event; repositories named in
		// kptbot.yaml are cloned from the server's root.
		c.GitURL = s.ServerURL + "/"
		opts.Forges = map[string]forge.Forge{forge.GitHub: c}
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
		opts.Forges = map[string]forge.Forge{forge.GitLab: c}
		opts.Logins[forge.GitLab] = self.Login
	}
	return bot.New(opts)
}
