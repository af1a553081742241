// Command kptbot is the kptbot CLI: kpt-compatible package operations
// (pkg get/update/diff/init, fn render/eval) that need no Docker.
package main

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"

	"k8s.io/klog/v2"

	"github.com/kptbot/kptbot/internal/gcpolicy"
)

func main() {
	quietKlog()
	tuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// quietKlog silences kpt's library logging (klog): kptbot reports function
// results itself, and kpt's log lines would otherwise flood stderr.
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

// tuneGC sets the CLI's garbage collector (gcpolicy.CLI): off for the
// first CLIStartHeap a command allocates, which is all most commands
// allocate, then target 50 (a CLI command renders or updates a package
// once, and its peak memory is what users feel), unless the user set GOGC.
// `kptbot serve` replaces this with the server's settings (serveGC).
func tuneGC() {
	gcpolicy.CLI(os.Getenv).Apply()
}
