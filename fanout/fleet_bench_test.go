package fanout

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
)

// fleetSize is BenchmarkFleet's number of followers: $KPTBOT_FLEET
// (`make bench` sets 10000), 1,000 otherwise so `go test -bench .` stays
// short.
func fleetSize(b *testing.B) int {
	n := 1000
	if v := os.Getenv("KPTBOT_FLEET"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("KPTBOT_FLEET=%q: want a positive number of repositories", v)
		}
	}
	return n
}

// BenchmarkFleet is the performance issue's fleet on the in-memory fake
// forge: n repositories following one upstream package. Reported, for the
// bot alone (the fake forge answers at once, so this is the bot's own
// time): the full index build (every repository's kptbot.yaml read,
// indexWorkers at a time) in wall and CPU seconds and forge reads per
// repository; one repository's push kept in the index by its event, with
// no listing and no other read; the process's resident memory with the
// fleet indexed (the fake forge's repositories live in the same process,
// so this bounds the server's); one tag fanned out to every follower,
// wall time and CPU per follower.
func BenchmarkFleet(b *testing.B) {
	n := fleetSize(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		fl := newFleet(b, n)
		ctx := context.Background()
		reads := func() int {
			return fl.fake.Calls("ReadFile") + fl.fake.Calls("ReadTree") + fl.fake.Calls("ListRepos") + fl.fake.Calls("ListBranches")
		}
		cpu0, r0, start := cpuTime(), reads(), time.Now()
		b.StartTimer()
		if err := fl.bot.RefreshIndex(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(time.Since(start).Seconds(), "index-s")
		b.ReportMetric((cpuTime() - cpu0).Seconds(), "index-cpu-s")
		b.ReportMetric(float64(reads()-r0)/float64(n), "index-reads/repo")

		// Steady state: a follower's push is indexed from its event.
		lists, r1 := fl.fake.Calls("ListRepos"), reads()
		r := downstream(n)
		start = time.Now()
		if _, err := fl.bot.Handle(ctx, forge.Event{Forge: forge.GitHub, Kind: forge.EventBranchPushed, Repo: r, Ref: "refs/heads/main", Sender: forge.User{Login: "alice"}}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "index-event-ms")
		if fl.fake.Calls("ListRepos") != lists {
			b.Fatal("a push event rebuilt the whole index")
		}
		b.ReportMetric(float64(reads()-r1), "index-event-reads")

		runtime.GC()
		b.ReportMetric(float64(residentSet())/(1<<20), "RSS-indexed-MB")

		cpu0, start = cpuTime(), time.Now()
		b.StartTimer()
		out, _, err := fl.bot.FanOut(ctx, blueprints, "basens")
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Opened) < n {
			b.Fatalf("opened %d changes, want at least %d", len(out.Opened), n)
		}
		cpu := cpuTime() - cpu0
		b.ReportMetric(time.Since(start).Seconds(), "fanout-s")
		b.ReportMetric(cpu.Seconds(), "fanout-cpu-s")
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(out.Opened)), "cpu-ms/follower")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
		b.Logf("%d followers: %d changes opened", n, len(out.Opened))
	}
}

// residentSet is the process's resident set now (VmRSS), in bytes.
func residentSet() int64 {
	return statusKB("VmRSS:")
}

// statusKB is a /proc/self/status field in bytes.
func statusKB(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, field); ok {
			var kb int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), "kB"), &kb)
			return kb << 10
		}
	}
	return 0
}
