package main

import "github.com/spf13/cobra"

func newPkgInitCmd() *cobra.Command { return &cobra.Command{Use: "init"} }
func newPkgDiffCmd() *cobra.Command { return &cobra.Command{Use: "diff"} }
func newFnRenderCmd() *cobra.Command { return &cobra.Command{Use: "render"} }
func newFnEvalCmd() *cobra.Command { return &cobra.Command{Use: "eval"} }
func newFnListCmd() *cobra.Command { return &cobra.Command{Use: "list"} }
