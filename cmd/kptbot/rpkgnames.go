package main

import (
	"fmt"

	"github.com/kptbot/kptbot/gitstore"
	"github.com/spf13/cobra"
)

func rpkgGet() *cobra.Command {
	var f rpkgFlags
	var output string
	cmd := &cobra.Command{
		Use:     "get [NAME|PACKAGE] --repository URL [-o table|yaml|json]",
		Aliases: []string{"list"},
		Short:   "List package revisions (porchctl's columns; -o yaml|json for PackageRevision objects)",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.repo == "" {
				return errRepoRequired
			}
			rows, warnings, err := gitstore.Revisions(cmd.Context(), f.repo, f.branch)
			if err != nil {
				return err
			}
			single := false
			if len(args) == 1 {
				if rows, single, err = gitstore.SelectRevisions(rows, args[0], f.repo); err != nil {
					return err
				}
			}
			for _, warn := range warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", warn)
			}
			return gitstore.WriteRevisions(cmd.OutOrStdout(), rows, output, single)
		},
	}
	f.add(cmd, false, false)
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table, yaml or json")
	return cmd
}
