// Package gcpolicy is the garbage collector's settings for each kind of
// kptbot process: a CLI command keeps memory low (it renders a package
// once and exits), the server keeps webhook latency low (it runs for
// days). The user's GOGC and GOMEMLIMIT always win.
package gcpolicy

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// CLIPercent is the CLI's GC target: updating, and rendering pipelines
// that cannot stream, hold the package as YAML node trees (~45x its size
// on disk) and churn through as much again in garbage; at Go's default of
// 100 the heap grows to twice what is live. At 50 a 10,000-resource render
// peaks ~30% lower in the same wall time on two cores.
const CLIPercent = 50

// ServerPercent is the server's GC target. At 50, webhook deliveries were
// made to assist the collector while the workers allocate (in-handler p99
// 172–196 ms against 61–105 ms at 400); the memory limit bounds the heap
// the higher target lets grow.
const ServerPercent = 400

// DefaultLimit is the server's soft memory limit when no container limit
// can be read (cgroup v2 memory.max or v1 memory.limit_in_bytes).
const DefaultLimit = 1 << 30

// ContainerShare is the share of the container's memory limit the server's
// Go heap may use by default: the rest is for what the Go limit does not
// count (git and exec functions run as child processes in the same cgroup,
// the page cache of clones charged to it).
const ContainerShare = 0.7

// CLIStartHeap is what a CLI command may allocate before its first
// collection. Most commands (a render or an update of a package of tens of
// resources, `version`, `pkg get`) allocate about this much in all: at
// GOGC 50 from the start a 7-resource render collected 7 times, about a
// fifth of its wall time, to keep its peak about 1.5 MB lower. Past it the
// collector paces as CLIPercent says (see Settings.StartHeap). A larger
// start saved no more time and raised a 1,000-resource render's peak.
const CLIStartHeap = 12 << 20

// Settings is what to apply; a field below zero leaves the runtime's value
// (the user's environment, or Go's default) alone.
type Settings struct {
	Percent int
	Limit   int64
	// StartHeap, above zero, defers Percent and Limit: the collector stays
	// off until the process has allocated StartHeap more (GOGC off, with a
	// memory limit StartHeap above the Go memory in use when applied), and
	// the first collection applies Percent and Limit. A small command never collects; a large one collects once
	// early and is then paced as before. Keeping the limit past the
	// first collection would make a command whose live heap nears it
	// collect back to back (a streamed 10,000-resource render took 2.5x
	// as long).
	StartHeap int64
}

// CLI is the CLI's settings given the environment: CLIPercent after a
// CLIStartHeap start, unless the user set GOGC (their pacing wins) or
// GOMEMLIMIT (the start would replace their limit; CLIPercent still
// applies).
func CLI(getenv func(string) string) Settings {
	s := Settings{Percent: -1, Limit: -1}
	if getenv("GOGC") == "" {
		s.Percent = CLIPercent
		if getenv("GOMEMLIMIT") == "" {
			s.StartHeap = CLIStartHeap
		}
	}
	return s
}

// Server is the server's settings given the environment, the --memory-limit
// flag ("auto", "off"/"0", or a size as GOMEMLIMIT takes it: 768MiB, 2GiB,
// bytes) and the container's memory limit (0 if none was read). "auto" is
// ContainerShare of the container's limit, else DefaultLimit, applied only
// when kptbot raised the GC target itself: a user who set GOGC chose the
// collector's trade-off and gets a limit only by asking for one.
func Server(getenv func(string) string, flag string, container int64) (Settings, error) {
	s := Settings{Percent: -1, Limit: -1}
	userGOGC := getenv("GOGC") != ""
	if !userGOGC {
		s.Percent = ServerPercent
	}
	limit, auto, err := parseLimit(flag)
	if err != nil {
		return s, fmt.Errorf("--memory-limit %q: %w", flag, err)
	}
	switch {
	case getenv("GOMEMLIMIT") != "":
	case !auto:
		s.Limit = limit
	case userGOGC:
	case container > 0:
		s.Limit = int64(float64(container) * ContainerShare)
	default:
		s.Limit = DefaultLimit
	}
	return s, nil
}

// Apply sets s in the runtime. It replaces whatever an earlier Apply set,
// including a start that has not ended yet (`kptbot serve` applies the
// server's settings over the CLI's).
func (s Settings) Apply() {
	mu.Lock()
	defer mu.Unlock()
	generation++
	if startedFrom >= 0 && s.Limit < 0 {
		s.Limit = startedFrom // a start's limit must not outlive it
	}
	startedFrom = -1
	if s.StartHeap > 0 && s.Percent >= 0 {
		debug.SetGCPercent(-1)
		startedFrom = debug.SetMemoryLimit(goMemory() + s.StartHeap)
		after := s
		after.StartHeap = 0
		if after.Limit < 0 {
			after.Limit = startedFrom
		}
		afterFirstCollection(generation, after)
		return
	}
	s.set()
}

func (s Settings) set() {
	if s.Percent >= 0 {
		debug.SetGCPercent(s.Percent)
	}
	if s.Limit == 0 {
		debug.SetMemoryLimit(math.MaxInt64) // off: Go's default
	} else if s.Limit > 0 {
		debug.SetMemoryLimit(s.Limit)
	}
}

// parseLimit reads a --memory-limit value: limit 0 is off.
func parseLimit(v string) (limit int64, auto bool, err error) {
	switch strings.TrimSpace(v) {
	case "", "auto":
		return 0, true, nil
	case "off", "0":
		return 0, false, nil
	}
	num, mult := v, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(v, u.suffix) {
			num, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, false, errors.New("expected auto, off, or a size such as 768MiB or 2GiB (B, KiB, MiB, GiB, TiB)")
	}
	return n * mult, false, nil
}

// ContainerLimit reads the memory limit of the cgroup the process runs in
// (as a container sees it at /sys/fs/cgroup): 0 when there is none or it
// cannot be read.
func ContainerLimit() int64 {
	return containerLimit(os.ReadFile)
}

// unlimitedV1 is about where cgroup v1 reports "no limit" (the largest
// page-aligned int64).
const unlimitedV1 = 1 << 62

func containerLimit(read func(string) ([]byte, error)) int64 {
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := read(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= unlimitedV1 {
			return 0 // "max", or v1's unlimited
		}
		return n
	}
	return 0
}
