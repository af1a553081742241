package main

import (
	"fmt"

	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/fetch"
	"github.com/spf13/cobra"
)

func newPkgInitCmd() *cobra.Command {
	var opts engine.InitOptions
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Initialize a directory as a kpt package (like kpt pkg init)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) > 0 {
				dir = args[0]
			}
			files, err := engine.Init(dir, opts)
			if err != nil {
				return err
			}
			for _, f := range files {
				fmt.Fprintf(cmd.OutOrStdout(), "writing %s\n", f)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Description, "description", "sample description", "short description of the package")
	cmd.Flags().StringSliceVar(&opts.Keywords, "keywords", nil, "list of keywords for the package")
	cmd.Flags().StringVar(&opts.Site, "site", "", "link to the package's documentation")
	return cmd
}

func newPkgDiffCmd() *cobra.Command {
	var opts engine.DiffOptions
	cmd := &cobra.Command{
		Use:   "diff [PKG_PATH][@VERSION]",
		Short: "Show changes between a local package and its upstream (like kpt pkg diff)",
		Long: `Show the differences between a local package and its upstream as a unified
diff printed by kptbot itself (no diff tool needed).

--diff-type:
  local     upstream at the locked version → local package (default)
  remote    upstream at the locked version → upstream at VERSION
  combined  upstream at VERSION → local package
  3way      the local and the remote diff, one after the other`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, version := splitPkgArg(args)
			opts.Version = version
			out, err := engine.Diff(cmd.Context(), fetch.NewClient(), dir, opts)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), out)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Type, "diff-type", engine.DiffLocal, "local, remote, combined or 3way")
	cmd.Flags().IntVarP(&opts.Context, "unified", "U", 3, "lines of context")
	return cmd
}
