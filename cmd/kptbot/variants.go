package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/forge/gitrepo"
	"github.com/kptbot/kptbot/reconcile"
	"github.com/spf13/cobra"
)

func newVariantsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "variants", Short: "Package variants: reconcile a repository's kptbot.yaml"}
	var repo, branch, output string
	var dryRun bool
	rec := &cobra.Command{
		Use:   "reconcile --repo URL [--dry-run]",
		Short: "Converge every PackageVariant of a repository (clone, upgrade or edit one draft per variant)",
		Long: `Read kptbot.yaml from the registered branch and converge each PackageVariant,
as Porch's PackageVariant controller does: clone a draft when the downstream
package does not exist (adoptionPolicy decides about one that does), upgrade
it (3-way merge, local edits kept) when the upstream has a newer revision,
edit it when the variant's mutations change it. One open draft per variant: a
newer upstream updates that draft. A draft someone else edited is left alone.
Paused variants are reported, not changed. Packages whose variant is gone are
proposed for deletion. Idempotent: a second run right after the first does
nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if repo == "" {
				return fmt.Errorf("--repo is required: the repository (local path, file:// or http(s) URL)")
			}
			store, err := gitrepo.OpenStore(cmd.Context(), repo, branch)
			if err != nil {
				return err
			}
			plan, err := reconcile.Run(cmd.Context(), store, branch, reconcile.Options{DryRun: dryRun})
			out := cmd.OutOrStdout()
			if output == "json" {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if encErr := enc.Encode(plan); encErr != nil {
					return encErr
				}
				return err
			}
			verb := "did"
			if dryRun {
				verb = "would do"
			}
			fmt.Fprintf(out, "%d variant action(s) kptbot %s:\n", len(plan), verb)
			for _, a := range plan {
				ws := ""
				if a.Workspace != "" {
					ws = "/" + a.Workspace
				}
				fmt.Fprintf(out, "  %-14s %s%s (variant %s): %s\n", a.Kind, a.Package, ws, a.Variant, a.Why)
				if len(a.Blocking) > 0 {
					fmt.Fprintf(out, "  %-14s blocks proposal: %s\n", "", strings.Join(a.Blocking, "; "))
				}
			}
			return err
		},
	}
	rec.Flags().StringVar(&repo, "repo", "", "the repository (local path, file:// or http(s) URL)")
	rec.Flags().StringVar(&branch, "branch", "main", "the registered branch")
	rec.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan without writing")
	rec.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	cmd.AddCommand(rec)
	return cmd
}
