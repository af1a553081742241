package gcpolicy

import (
	"runtime"
	"runtime/metrics"
	"sync"
)

// mu orders Apply against the end of a start: the end applies its
// settings only if no Apply came after the one that began the start.
// startedFrom is the memory limit a start replaced (-1: none running).
var (
	mu          sync.Mutex
	generation  uint64
	startedFrom int64 = -1
)

// afterFirstCollection applies after once the runtime has collected,
// unless Apply was called again since gen. The runtime has no hook for
// the end of a collection; a finalizer on an object nothing references
// runs after the first one.
func afterFirstCollection(gen uint64, after Settings) {
	sentinel := new([32]byte) // not a tiny allocation: those are finalized in batches
	runtime.SetFinalizer(sentinel, func(*[32]byte) {
		mu.Lock()
		defer mu.Unlock()
		if gen == generation {
			startedFrom = -1
			after.set()
		}
	})
}

// goMemory is the Go memory the runtime's memory limit counts now: all it
// has mapped but what it has returned to the system.
func goMemory() int64 {
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 || sample[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(sample[0].Value.Uint64() - sample[1].Value.Uint64())
}
