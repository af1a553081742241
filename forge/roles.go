package forge

import "context"

// The small role interfaces the bot uses; an adapter implements those its
// forge supports and returns ErrNotSupported from the rest.

// Tag is a tag and the commit it points at.
type Tag struct {
	Name string `json:"name"`
	SHA  string `json:"sha"`
}

// Branch is a branch and its tip.
type Branch struct {
	Name string `json:"name"`
	SHA  string `json:"sha"`
}

// FileReader reads repository content at a ref.
type FileReader interface {
	// ReadFile returns a file's content at ref (a branch, tag or SHA);
	// ErrNotFound when it does not exist.
	ReadFile(ctx context.Context, repo Repo, ref, path string) ([]byte, error)
}

// RefLister lists tags and branches.
type RefLister interface {
	ListTags(ctx context.Context, repo Repo) ([]Tag, error)
	ListBranches(ctx context.Context, repo Repo) ([]Branch, error)
}

// Pusher moves a branch with compare-and-swap.
type Pusher interface {
	// PushFiles commits files (slash paths; nil content deletes) on top of
	// base and moves branch to the new commit, but only if branch is at
	// oldSHA (empty: the branch must not exist); otherwise ErrConflict.
	PushFiles(ctx context.Context, repo Repo, branch, oldSHA, base string, files map[string][]byte, message string) (sha string, err error)
}

// ChangeSpec opens a change.
type ChangeSpec struct {
	Head, Base, Title, Body string
	Draft                   bool
	Labels                  []string
}

// ChangeUpdate edits a change; nil fields are left alone.
type ChangeUpdate struct {
	Title, Body *string
	Draft       *bool
	Labels      []string
}

// Changes opens, reads, updates, closes and merges changes.
type Changes interface {
	ListChangesByHead(ctx context.Context, repo Repo, head string) ([]Change, error)
	OpenChange(ctx context.Context, repo Repo, spec ChangeSpec) (Change, error)
	UpdateChange(ctx context.Context, repo Repo, number int, u ChangeUpdate) (Change, error)
	CloseChange(ctx context.Context, repo Repo, number int) error
	// Merge merges exactly expectedHeadSHA: if the head moved, ErrConflict.
	Merge(ctx context.Context, repo Repo, number int, expectedHeadSHA, method string) (mergeSHA string, err error)
	ListReviews(ctx context.Context, repo Repo, number int) ([]Review, error)
}

// Tagger creates tags.
type Tagger interface {
	// CreateTag is idempotent: the tag already at sha is success, at
	// another commit ErrConflict.
	CreateTag(ctx context.Context, repo Repo, name, sha, message string) error
}

// Commenter comments on changes.
type Commenter interface {
	Comment(ctx context.Context, repo Repo, number int, body string) (Comment, error)
	EditComment(ctx context.Context, repo Repo, id int64, body string) error
	React(ctx context.Context, repo Repo, commentID int64, reaction string) error
}

// Permission is a user's access to a repository.
type Permission string

// Permissions, weakest first.
const (
	PermissionNone  Permission = "none"
	PermissionRead  Permission = "read"
	PermissionWrite Permission = "write"
	PermissionAdmin Permission = "admin"
)

// Permissions answers who may do what.
type Permissions interface {
	Permission(ctx context.Context, repo Repo, login string) (Permission, error)
}

// Forge is every role together, as the bot's full view of a forge.
type Forge interface {
	FileReader
	RefLister
	Pusher
	Changes
	Tagger
	Commenter
	Permissions
}
