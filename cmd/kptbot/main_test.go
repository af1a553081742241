package main

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	quietKlog()
	os.Exit(m.Run())
}
