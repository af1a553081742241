package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"
)

// exitError carries a specific exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// run executes the CLI and maps errors to exit codes: this is the one place
// where errors become exit statuses.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr, args...)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "Error: %v\n", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

// newRootCmd builds the command tree, or only the top-level command the
// command line's first word names (help and completion get the whole tree).
func newRootCmd(stdout, stderr io.Writer, args ...string) *cobra.Command {
	root := &cobra.Command{Use: "kptbot", Short: "kpt package orchestration on git forges, and a kpt-compatible CLI that needs no Docker",
		SilenceUsage: true, SilenceErrors: true}
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmds := topCommands()
	for _, name := range slices.Sorted(maps.Keys(cmds)) {
		if len(args) == 0 || cmds[args[0]] == nil || args[0] == name {
			root.AddCommand(cmds[name]())
		}
	}
	return root
}

// topCommands builds each top-level command, by its Use's first word.
func topCommands() map[string]func() *cobra.Command {
	group := func(use, short string, subs ...func() *cobra.Command) func() *cobra.Command {
		return func() *cobra.Command {
			c := &cobra.Command{Use: use, Short: short}
			for _, sub := range subs {
				c.AddCommand(sub())
			}
			return c
		}
	}
	return map[string]func() *cobra.Command{
		"pkg":    group("pkg", "Package operations: init, get, update, diff, list, push", newPkgInitCmd, newPkgGetCmd, newPkgUpdateCmd, newPkgDiffCmd, newPkgListCmd, newPkgPushCmd),
		"fn":     group("fn", "Function operations: render, eval, list", newFnRenderCmd, newFnEvalCmd, newFnListCmd, newFnSourceCmd, newFnSinkCmd),
		"config": newConfigCmd, "rpkg": newRpkgCmd, "variants": newVariantsCmd, "webhook": newWebhookCmd, "forge": newForgeCmd,
		"version": newVersionCmd, "serve": newServeCmd, "replay": newReplayCmd, "plan": newPlanCmd, "action": newActionCmd, "demo": newDemoCmd,
	}
}

// writeJSONTo prints v as indented JSON, the form every -o json takes.
func writeJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
