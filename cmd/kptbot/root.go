package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// newRootCmd builds the command tree. args is the command line: when its
// first word names a top-level command, only that command is built (its
// flags and subcommands), since it is the only one that can run; help,
// completion and anything else get the whole tree.
func newRootCmd(stdout, stderr io.Writer, args ...string) *cobra.Command {
	root := &cobra.Command{
		Use:           "kptbot",
		Short:         "kpt package orchestration on git forges, and a kpt-compatible CLI that needs no Docker",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmds := topCommands()
	named := ""
	if len(args) > 0 && slices.ContainsFunc(cmds, func(c topCommand) bool { return c.name == args[0] }) {
		named = args[0]
	}
	for _, c := range cmds {
		if named == "" || c.name == named {
			root.AddCommand(c.build())
		}
	}
	return root
}

// topCommand is a top-level command and how to build it; name is the
// first word of its Use (TestTopCommandNames).
type topCommand struct {
	name  string
	build func() *cobra.Command
}

func topCommands() []topCommand {
	return []topCommand{
		{"pkg", newPkgCmd}, {"fn", newFnCmd}, {"config", newConfigCmd}, {"rpkg", newRpkgCmd},
		{"variants", newVariantsCmd}, {"webhook", newWebhookCmd}, {"forge", newForgeCmd},
		{"version", newVersionCmd}, {"serve", newServeCmd}, {"replay", newReplayCmd},
		{"plan", newPlanCmd}, {"action", newActionCmd}, {"demo", newDemoCmd},
	}
}

func newPkgCmd() *cobra.Command {
	pkg := &cobra.Command{Use: "pkg", Short: "Package operations: init, get, update, diff, list, push"}
	pkg.AddCommand(newPkgInitCmd(), newPkgGetCmd(), newPkgUpdateCmd(), newPkgDiffCmd(), newPkgListCmd(), newPkgPushCmd())
	return pkg
}

func newFnCmd() *cobra.Command {
	fn := &cobra.Command{Use: "fn", Short: "Function operations: render, eval, list"}
	fn.AddCommand(newFnRenderCmd(), newFnEvalCmd(), newFnListCmd(), newFnSourceCmd(), newFnSinkCmd())
	return fn
}

// writeJSONTo prints v as indented JSON, the form every -o json takes.
func writeJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
