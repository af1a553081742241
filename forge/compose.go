package forge

import (
	"context"
	"fmt"
)

// Forge is the bot's view of one repository's forge: every role, each an
// interface of its own. It is a struct, not an interface, so that nothing
// depends on every method at once: code that needs one role takes that
// role, and the struct only carries them together (its methods are the
// roles', promoted). Build it with Compose; a role the adapter lacks
// answers ErrNotSupported. The zero Forge has no roles: calling one panics.
type Forge struct {
	FileReader
	TreeReader
	CommitLogger
	RefLister
	Pusher
	ChangeReader
	ChangeWriter
	Tagger
	Commenter
	CommentReader
	Issues
	Teams
	Permissions
	Checks
	Dispatcher
}

// Compose gathers the roles impl implements into a Forge. A role impl
// does not implement is filled with one whose every call fails with an
// error wrapping ErrNotSupported and naming the role, so a missing role is
// an explicit error at the call, never a nil dereference.
func Compose(impl any) Forge {
	var f Forge
	f.FileReader = role[FileReader](impl, "FileReader")
	f.TreeReader = role[TreeReader](impl, "TreeReader")
	f.CommitLogger = role[CommitLogger](impl, "CommitLogger")
	f.RefLister = role[RefLister](impl, "RefLister")
	f.Pusher = role[Pusher](impl, "Pusher")
	f.ChangeReader = role[ChangeReader](impl, "ChangeReader")
	f.ChangeWriter = role[ChangeWriter](impl, "ChangeWriter")
	f.Tagger = role[Tagger](impl, "Tagger")
	f.Commenter = role[Commenter](impl, "Commenter")
	f.CommentReader = role[CommentReader](impl, "CommentReader")
	f.Issues = role[Issues](impl, "Issues")
	f.Teams = role[Teams](impl, "Teams")
	f.Permissions = role[Permissions](impl, "Permissions")
	f.Checks = role[Checks](impl, "Checks")
	f.Dispatcher = role[Dispatcher](impl, "Dispatcher")
	return f
}

// role is impl as R, or a stand-in failing with ErrNotSupported.
func role[R any](impl any, name string) R {
	if r, ok := impl.(R); ok {
		return r
	}
	var stand any = unavailable{fmt.Errorf("%w: %T has no %s role", ErrNotSupported, impl, name)}
	return stand.(R)
}

// Resolver is one forge identity: the repositories it can see and, for
// each, the Forge that acts on it. A token's identity is the same client
// for every repository (Static); a GitHub App picks the installation that
// holds the repository. The bot resolves once per work item.
type Resolver interface {
	RepoLister
	For(ctx context.Context, repo Repo) (Forge, error)
}

// Static is the Resolver of a client that acts on every repository
// itself (a token): For always returns Compose(impl), and ListRepos is
// impl's (ErrNotSupported when impl cannot list).
func Static(impl any) Resolver {
	l, ok := impl.(RepoLister)
	if !ok {
		l = unavailable{fmt.Errorf("%w: %T has no RepoLister role", ErrNotSupported, impl)}
	}
	return static{RepoLister: l, f: Compose(impl)}
}

type static struct {
	RepoLister
	f Forge
}

func (s static) For(context.Context, Repo) (Forge, error) { return s.f, nil }
