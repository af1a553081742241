package gcpolicy

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcSettings reads the runtime's target and limit without changing them.
func gcSettings() (int, int64) {
	pct := debug.SetGCPercent(-1)
	debug.SetGCPercent(pct)
	return pct, debug.SetMemoryLimit(-1)
}

// collectUntil runs collections until the runtime's settings are want (the
// start ends on the finalizer goroutine, after the collection).
func collectUntil(t *testing.T, wantPct int, wantLimit int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		runtime.GC()
		if pct, limit := gcSettings(); pct == wantPct && limit == wantLimit {
			return
		}
	}
	pct, limit := gcSettings()
	t.Fatalf("after collections: GOGC %d, limit %d; want %d, %d", pct, limit, wantPct, wantLimit)
}

// TestStart applies the CLI's settings in this process and follows them:
// the collector off under a limit StartHeap above what is in use, then,
// from the first collection, CLIPercent and the limit from before the
// start (a start's limit kept would make large commands collect back to
// back). It changes the process's collector, so it is not parallel.
func TestStart(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: the user's settings win")
	}
	oldPct, oldLimit := gcSettings()
	t.Cleanup(func() { Settings{Percent: oldPct, Limit: oldLimit}.Apply() })
	Settings{Percent: 100, Limit: 0}.Apply()

	before := goMemory()
	CLI(os.Getenv).Apply()
	pct, limit := gcSettings()
	if pct != -1 || limit < before+CLIStartHeap || limit > before+CLIStartHeap+(8<<20) {
		t.Errorf("during the start: GOGC %d, limit %d; want off, about %d", pct, limit, before+CLIStartHeap)
	}
	collectUntil(t, CLIPercent, math.MaxInt64)
}

// TestStartReplaced: settings applied during a start (serve's over the
// CLI's) win over the start's end, and a start's limit never outlives it
// even when the new settings leave the limit alone.
func TestStartReplaced(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: the user's settings win")
	}
	oldPct, oldLimit := gcSettings()
	t.Cleanup(func() { Settings{Percent: oldPct, Limit: oldLimit}.Apply() })
	Settings{Percent: 100, Limit: 0}.Apply()

	CLI(os.Getenv).Apply()
	Settings{Percent: ServerPercent, Limit: 900 << 20}.Apply()
	runtime.GC()
	runtime.GC()
	time.Sleep(50 * time.Millisecond) // the finalizer's turn
	if pct, limit := gcSettings(); pct != ServerPercent || limit != 900<<20 {
		t.Errorf("a start ended over later settings: GOGC %d, limit %d", pct, limit)
	}

	Settings{Percent: 100, Limit: 0}.Apply()
	CLI(os.Getenv).Apply()
	Settings{Percent: 75, Limit: -1}.Apply()
	if pct, limit := gcSettings(); pct != 75 || limit != math.MaxInt64 {
		t.Errorf("settings leaving the limit alone during a start: GOGC %d, limit %d; want 75 and no limit", pct, limit)
	}
}
