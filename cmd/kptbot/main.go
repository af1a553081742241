// Command kptbot is the kptbot CLI: kpt-compatible package operations
// (pkg get/update/diff/init, fn render/eval) that need no Docker.
package main

import (
	"context"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
