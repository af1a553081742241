package server

import (
	"runtime"
	"syscall"
)

// workerNice is how much lower than the intake's a worker thread's CPU
// priority is: on a machine whose cores the workers' renders fill, a
// delivery's goroutine then gets a core before a render does, so
// accepting a webhook never waits for a time slice behind bulk work.
const workerNice = 10

// lowerWorkerPriority locks the calling worker goroutine to its own OS
// thread and lowers that thread's priority (Linux's per-thread nice; a
// thread may always lower its own). Goroutines the worker starts run on
// other threads at the usual priority. Failure leaves the priority as it
// was: the queue's order still puts people first.
func lowerWorkerPriority() {
	runtime.LockOSThread()
	tid := syscall.Gettid()
	cur, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err != nil {
		return
	}
	// The raw getpriority syscall returns 20 - nice.
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, 20-cur+workerNice)
}
