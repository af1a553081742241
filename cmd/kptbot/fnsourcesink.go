package main

import (
	"github.com/kptbot/kptbot/engine/fneval"
	"github.com/spf13/cobra"
)

func newFnSourceCmd() *cobra.Command {
	var opts fneval.SourceOptions
	cmd := &cobra.Command{Use: "source [DIR]", Short: "Write a package's resources as a ResourceList to standard output", Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return fneval.Source(c.Context(), c.OutOrStdout(), c.ErrOrStderr(), args, opts)
		}}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "stdout", "stdout (a ResourceList) or unwrap (plain YAML)")
	cmd.Flags().StringVar(&opts.FnConfig, "fn-config", "", "path to a function config file, given as the list's functionConfig")
	return cmd
}

func newFnSinkCmd() *cobra.Command {
	return &cobra.Command{Use: "sink DIR", Short: "Write the resources of a ResourceList on standard input into a new directory", Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return fneval.Sink(c.Context(), c.InOrStdin(), args[0]) }}
}
