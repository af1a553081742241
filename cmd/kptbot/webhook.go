package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/gitlab"
	"github.com/kptbot/kptbot/server"
	"github.com/spf13/cobra"
)

func newWebhookCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "webhook", Short: "Webhook deliveries: check and normalize"}
	var forgeName, event, secretFile, signature string
	parse := &cobra.Command{
		Use:   "parse PAYLOAD.json --forge github|gitlab --event NAME [--secret-file F [--signature SIG]]",
		Short: "Normalize a saved webhook delivery into the event kptbot acts on",
		Long: `Run a saved webhook payload through the same intake the server uses and print
the normalized event as JSON. With --secret-file the delivery is verified as
the server verifies it: GitHub's X-Hub-Signature-256 (--signature; computed
from the secret when omitted) or GitLab's X-Gitlab-Token (the secret itself).
Without it, the payload is trusted (for inspecting captured deliveries).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("reading %s: %w", args[0], err)
			}
			var secret []byte
			verify := secretFile != ""
			if verify {
				if secret, err = os.ReadFile(secretFile); err != nil {
					return fmt.Errorf("reading --secret-file: %w", err)
				}
				secret = bytes.TrimRight(secret, "\r\n")
			}
			if int64(len(body)) > server.MaxWebhookBody {
				return fmt.Errorf("%s: %w: %d bytes, limit %d", args[0], forge.ErrTooLarge, len(body), server.MaxWebhookBody)
			}
			var ev forge.Event
			switch forgeName {
			case forge.GitHub:
				// Without --signature the secret signs the body itself.
				if verify && signature != "" {
					if err := github.VerifySignature(secret, body, signature); err != nil {
						return err
					}
				}
				ev, err = github.Normalize(event, "cli", body)
			case forge.GitLab:
				// GitLab's token is the secret itself: only an empty one fails.
				if verify && len(bytes.TrimSpace(secret)) == 0 {
					return fmt.Errorf("--secret-file: %w: the secret is empty", forge.ErrUnauthorized)
				}
				ev, err = gitlab.Normalize(event, "cli", body)
			default:
				return fmt.Errorf("--forge %q: expected github or gitlab", forgeName)
			}
			if err != nil {
				return err
			}
			return writeJSONTo(cmd.OutOrStdout(), ev)
		},
	}
	parse.Flags().StringVar(&forgeName, "forge", "", "github or gitlab")
	parse.Flags().StringVar(&event, "event", "", "the event header: X-GitHub-Event (pull_request, push, ...) or X-Gitlab-Event (\"Merge Request Hook\", ...)")
	parse.Flags().StringVar(&secretFile, "secret-file", "", "verify with this webhook secret")
	parse.Flags().StringVar(&signature, "signature", "", "GitHub: the delivery's X-Hub-Signature-256 to check (with --secret-file)")
	cmd.AddCommand(parse)
	return cmd
}
