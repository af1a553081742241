package ratelimit

import "context"

type priorityKey struct{}

// WithPriority marks the writes made with ctx, on any forge: a person's
// command (Interactive) goes before a fan-out update (Bulk, the default)
// in the identity's scheduler. The adapters' transports read it with
// PriorityFrom.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityFrom is the priority WithPriority put on ctx, Bulk when none.
func PriorityFrom(ctx context.Context) Priority {
	p, _ := ctx.Value(priorityKey{}).(Priority)
	return p
}
