package gitrepo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"
)

// PushError is the one rule for what a push's result err means, for the
// adapters' pushes and branch deletions and for gitstore's ref updates:
// nil when the remote took the update or already held it; conflict (the
// caller's sentinel: forge.ErrConflict, gitstore.ErrConflict) when the
// remote, or go-git's lease check, refused because a ref was not where the
// pusher expected, so the compare-and-swap lost and the caller reads again
// rather than fails; otherwise err itself. op names the operation
// ("pushing main to URL", with any URL redacted) and leads the message.
func PushError(err, conflict error, op string) error {
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
		return nil
	case errors.Is(err, errAlreadyThere):
		return nil
	case errors.Is(err, errRefMoved), pushRejected(err):
		return fmt.Errorf("%w: %s: %v", conflict, op, err)
	default:
		return fmt.Errorf("%s: %w", op, err)
	}
}

// pushRejected reports a push refused because a ref was not where the
// pusher expected: go-git's lease check ("remote ref … required to be …"),
// a non-fast-forward update, a tag or branch that already exists, a
// remote's "rejected" status, or receive-pack's "failed to update ref"
// (its own compare-and-swap on the old value lost under the ref lock:
// the ref was created or moved after it advertised the refs), which an
// atomic push reports on every ref as "atomic transaction failed".
func pushRejected(err error) bool {
	msg := err.Error()
	for _, s := range []string{"required to be", "non-fast-forward", "already exists", "rejected", "failed to update ref", "atomic transaction failed"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
