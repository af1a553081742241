package fanout

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkFanOut1000 fans one upstream tag out to 1,000 downstream
// repositories on the in-memory fake forge: every downstream gets a clone
// change (engine get, the variant's mutations, render, one push, one PR,
// one check). Reported: wall time per fan-out, CPU per variant, REST
// writes per change, and the process's peak RSS.
func BenchmarkFanOut1000(b *testing.B) {
	const n = 1000
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		fl := newFleet(b, n)
		ctx := context.Background()
		if err := fl.bot.RefreshIndex(ctx); err != nil {
			b.Fatal(err)
		}
		ops := []string{"OpenChange", "UpdateChange", "CloseChange", "Merge", "CreateTag", "Comment", "EditComment", "React", "ReportCheck", "Dispatch"}
		before := 0
		for _, op := range ops {
			before += fl.fake.Calls(op) // the fixture's own writes
		}
		cpu0 := cpuTime()
		start := time.Now()
		b.StartTimer()
		out, _, err := fl.bot.FanOut(ctx, blueprints, "basens")
		b.StopTimer()
		wall := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Opened) != n+2 {
			b.Fatalf("opened %d changes, want %d", len(out.Opened), n+2)
		}
		writes := -before
		for _, op := range ops {
			writes += fl.fake.Calls(op)
		}
		// The upstream's dashboard issue is written once per fan-out,
		// not per change.
		b.ReportMetric(float64(fl.fake.Calls("OpenIssue")+fl.fake.Calls("EditIssue")), "dashboard-writes")
		b.ReportMetric(wall.Seconds(), "s/fanout")
		b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(n+2), "cpu-ms/variant")
		b.ReportMetric(float64(writes)/float64(len(out.Opened)), "writes/change")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
	}
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * time.Second / 100 // USER_HZ
}

// peakRSS is the process's high-water resident set (VmHWM), in bytes.
func peakRSS() int64 { return statusKB("VmHWM:") }
