package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

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
	root := newRootCmd(stdout, stderr)
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

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "kptbot",
		Short:         "kpt package orchestration on git forges, and a kpt-compatible CLI that needs no Docker",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	pkg := &cobra.Command{Use: "pkg", Short: "Package operations: init, get, update, diff, list, push"}
	pkg.AddCommand(newPkgInitCmd(), newPkgGetCmd(), newPkgUpdateCmd(), newPkgDiffCmd(), newPkgListCmd(), newPkgPushCmd())
	fn := &cobra.Command{Use: "fn", Short: "Function operations: render, eval, list"}
	fn.AddCommand(newFnRenderCmd(), newFnEvalCmd(), newFnListCmd(), newFnSourceCmd(), newFnSinkCmd())
	root.AddCommand(pkg, fn, newConfigCmd(), newRpkgCmd(), newVariantsCmd(), newWebhookCmd(), newForgeCmd())
	root.AddCommand(newVersionCmd(), newServeCmd(), newReplayCmd(), newPlanCmd(), newActionCmd(), newDemoCmd())
	return root
}

// writeJSONTo prints v as indented JSON, the form every -o json takes.
func writeJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
