// Package enginetest holds what the engine packages' tests share: golden
// files and trees (refreshed with go test -update), generated packages and
// seeded random edits, and a TestMain that keeps kpt's klog output quiet.
package enginetest

import (
	"flag"
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"

	// Every engine test binary accepts -update, also those without golden files.
	_ "github.com/kptbot/kptbot/internal/golden"
)

// Main runs the tests of m with kpt's renderer, which logs through klog,
// kept quiet, so test and benchmark output stays readable.
func Main(m *testing.M) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	flag.Parse()
	os.Exit(m.Run())
}
