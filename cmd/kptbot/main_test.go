package main

import (
	"context"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	quietKlog()
	if os.Getenv(asCLIEnv) == "1" {
		// the test binary is kptbot for a script run by a test (kpt's
		// e2e exec.sh cases call `kpt`)
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
