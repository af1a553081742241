package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/kptbot/kptbot/action"
	"github.com/kptbot/kptbot/server"
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

// actionBot is server.NewActionBot, with the older KPTBOT_FANOUT spelling
// of the fan-out input honoured.
func actionBot(ctx context.Context, s action.Setup) (action.Bot, error) {
	s.FanOutDispatch = s.FanOutDispatch || os.Getenv(envFanOut) == action.FanOutDispatch
	return server.NewActionBot(ctx, s)
}
