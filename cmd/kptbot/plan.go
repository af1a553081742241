package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/server"
)

func newPlanCmd() *cobra.Command {
	var cfgPath, output string
	cmd := &cobra.Command{
		Use:   "plan --config FILE [OWNER/NAME]",
		Short: "Print what the bot would do for one repository's package variants, or for every repository it can see; writes nothing",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := config.LoadServer(cfgPath)
			if err != nil {
				return err
			}
			a, err := server.NewApp(cmd.Context(), cfg, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), true)
			if err != nil {
				return err
			}
			repos, err := a.Bot.Repos(cmd.Context())
			if err != nil {
				return err
			}
			if len(args) == 1 {
				var one []forge.Repo
				for _, r := range repos {
					if strings.EqualFold(r.FullName, args[0]) {
						one = append(one, r)
					}
				}
				if len(one) == 0 {
					return fmt.Errorf("repository %s is not one the bot can see", args[0])
				}
				repos = one
			}
			var all []bot.VariantAction
			var errs []error
			for _, r := range repos {
				acts, _, err := a.Bot.Plan(cmd.Context(), r)
				all = append(all, acts...)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", r.FullName, err))
				}
			}
			if output == "json" {
				if err := writeJSONTo(cmd.OutOrStdout(), all); err != nil {
					return err
				}
				return errors.Join(errs...)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "REPOSITORY\tVARIANT\tPACKAGE\tACTION\tWHY")
			for _, x := range all {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", x.Repo, x.Variant, x.Package, x.Kind, x.Why)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return errors.Join(errs...)
		},
	}
	cmd.Flags().StringVar(&cfgPath, "config", "", "server configuration file (the forges and credentials to read with)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}
