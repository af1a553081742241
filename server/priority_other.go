//go:build !linux

package server

// lowerWorkerPriority is Linux's per-thread nice; elsewhere the queue's
// order alone puts webhooks first.
func lowerWorkerPriority() {}
