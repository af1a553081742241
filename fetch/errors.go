package fetch

import "errors"

// Errors every upstream source (git, OCI, HTTP archive) wraps, so callers
// can tell bad content from an unreachable source.
var (
	// ErrDigestMismatch: the content fetched is not the content pinned
	// (a #sha256= pin, an @sha256: digest or the Kptfile's upstreamLock).
	ErrDigestMismatch = errors.New("digest mismatch")
	// ErrNotPackage: what was fetched holds no Kptfile at the package root.
	ErrNotPackage = errors.New("not a kpt package")
)
