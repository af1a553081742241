package forge

import (
	"context"
	"fmt"
)

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
	// ListTree returns the slash paths of the files under dir (recursively;
	// "" is the root) at ref, sorted; ErrNotFound when ref does not exist.
	ListTree(ctx context.Context, repo Repo, ref, dir string) ([]string, error)
}

// Snapshot is the content of a directory at a commit.
type Snapshot struct {
	// Commit is the SHA the ref resolved to.
	Commit string
	// Files maps slash paths relative to the directory to content.
	Files map[string][]byte
}

// TreeReader reads a whole directory at a ref in one go: adapters fetch it
// over git, so a package costs one request, not one per file.
type TreeReader interface {
	// ReadTree returns every file under dir ("" is the root) at ref (a
	// branch, tag or SHA); ErrNotFound when ref does not exist. A dir
	// with no files is an empty Snapshot, not an error.
	ReadTree(ctx context.Context, repo Repo, ref, dir string) (Snapshot, error)
}

// Commit is one commit of a log.
type Commit struct {
	SHA     string   `json:"sha"`
	Message string   `json:"message"`
	Author  string   `json:"author,omitempty"`
	Parents []string `json:"parents,omitempty"`
}

// CommitLogger lists the commits between two revisions, for the upstream
// range an update change describes.
type CommitLogger interface {
	// Log returns the commits reachable from to but not from from (a
	// branch, tag or SHA), newest first, at most 100.
	Log(ctx context.Context, repo Repo, from, to string) ([]Commit, error)
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
	// DeleteBranch deletes branch only if it is still at expectedSHA
	// (ErrConflict otherwise, so a commit pushed since is never lost);
	// a branch already gone is success.
	DeleteBranch(ctx context.Context, repo Repo, branch, expectedSHA string) error
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

// ChangeReader reads changes and their reviews.
type ChangeReader interface {
	// ListChangesByHead returns the changes (any state) whose head is the
	// branch head of this repository.
	ListChangesByHead(ctx context.Context, repo Repo, head string) ([]Change, error)
	// ListOpenChanges returns every open change, for resync.
	ListOpenChanges(ctx context.Context, repo Repo) ([]Change, error)
	// GetChange returns one change; ErrNotFound when there is none.
	GetChange(ctx context.Context, repo Repo, number int) (Change, error)
	ListReviews(ctx context.Context, repo Repo, number int) ([]Review, error)
}

// ChangeWriter opens, updates, closes and merges changes.
type ChangeWriter interface {
	OpenChange(ctx context.Context, repo Repo, spec ChangeSpec) (Change, error)
	UpdateChange(ctx context.Context, repo Repo, number int, u ChangeUpdate) (Change, error)
	CloseChange(ctx context.Context, repo Repo, number int) error
	// Merge merges exactly expectedHeadSHA: if the head moved, ErrConflict;
	// if the forge refuses for another reason (branch protection, required
	// checks, conflicts, a draft, mergeability still being computed), an
	// error wrapping ErrNotMergeable with the forge's reason.
	Merge(ctx context.Context, repo Repo, number int, expectedHeadSHA, method string) (mergeSHA string, err error)
}

// CommentReader reads one comment back by id. An adapter implements it
// when its webhook deliveries cannot vouch for a comment's author and
// text: GitLab's one webhook token is shared by every project it is
// configured on, and in CI mode the payload is a pipeline variable any
// Developer can set. Such a comment is read back from the forge's API
// before any command in it runs. (A GitHub delivery is signed by GitHub
// itself over the whole body, so its adapter has no such role.)
type CommentReader interface {
	ReadComment(ctx context.Context, repo Repo, number int, id int64) (Comment, error)
}

// Tagger creates tags.
type Tagger interface {
	// CreateTag is idempotent: the tag already at sha is success, at
	// another commit ErrConflict.
	CreateTag(ctx context.Context, repo Repo, name, sha, message string) error
}

// Commenter comments on changes. number is the change a comment belongs to
// (GitLab addresses notes through their merge request).
type Commenter interface {
	Comment(ctx context.Context, repo Repo, number int, body string) (Comment, error)
	// ListComments returns a change's comments, oldest first.
	ListComments(ctx context.Context, repo Repo, number int) ([]Comment, error)
	EditComment(ctx context.Context, repo Repo, number int, id int64, body string) error
	// React adds a reaction (GitHub's names: +1, eyes, rocket, confused,
	// ...) to a comment.
	React(ctx context.Context, repo Repo, number int, commentID int64, reaction string) error
}

// Issue is an issue: kptbot keeps one dashboard issue per repository.
type Issue struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body,omitempty"`
	URL    string `json:"url,omitempty"`
}

// Issues finds, opens and edits issues.
type Issues interface {
	// ListIssues returns the open issues carrying label.
	ListIssues(ctx context.Context, repo Repo, label string) ([]Issue, error)
	OpenIssue(ctx context.Context, repo Repo, title, body string, labels []string) (Issue, error)
	EditIssue(ctx context.Context, repo Repo, number int, title, body string) error
}

// Teams answers team membership, for approver lists naming teams.
type Teams interface {
	// TeamMember reports whether login belongs to team: "org/slug" on
	// GitHub, a group path on GitLab.
	TeamMember(ctx context.Context, repo Repo, team, login string) (bool, error)
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

// CheckStatus is where a check is in its life.
type CheckStatus string

// Check statuses.
const (
	CheckQueued     CheckStatus = "queued"
	CheckInProgress CheckStatus = "in_progress"
	CheckCompleted  CheckStatus = "completed"
)

// CheckConclusion is a completed check's verdict.
type CheckConclusion string

// Check conclusions (GitHub's names; GitLab maps success, failed and
// canceled onto them).
const (
	CheckSuccess   CheckConclusion = "success"
	CheckFailure   CheckConclusion = "failure"
	CheckNeutral   CheckConclusion = "neutral"
	CheckCancelled CheckConclusion = "cancelled"
)

// CheckReport is a check run (GitHub) or commit status (GitLab) on a commit:
// the render result of a package revision.
type CheckReport struct {
	Name       string          `json:"name"`
	HeadSHA    string          `json:"headSHA"`
	Status     CheckStatus     `json:"status"`
	Conclusion CheckConclusion `json:"conclusion,omitempty"`
	Title      string          `json:"title,omitempty"`
	Summary    string          `json:"summary,omitempty"`
	DetailsURL string          `json:"detailsURL,omitempty"`
	// Annotations place findings at files and lines (GitHub check runs
	// show them on the diff; GitLab commit statuses have no such field,
	// so its adapter leaves them out and the summary carries them).
	Annotations []Annotation `json:"annotations,omitempty"`
}

// Annotation is one finding at a file and line.
type Annotation struct {
	// Path is a slash path relative to the repository root.
	Path string `json:"path"`
	// Line is 1-based; 0 means the whole file (reported at line 1).
	Line int `json:"line,omitempty"`
	// Level is notice, warning or failure (GitHub's names).
	Level   string `json:"level"`
	Message string `json:"message"`
}

// Validate reports a report the forges would reject: a completed check needs
// a conclusion and an unfinished one must not have one.
func (c CheckReport) Validate() error {
	switch {
	case c.Name == "" || c.HeadSHA == "":
		return fmt.Errorf("check report: name and headSHA are required (got %q, %q)", c.Name, c.HeadSHA)
	case c.Status == CheckCompleted && c.Conclusion == "":
		return fmt.Errorf("check report %q: status completed needs a conclusion", c.Name)
	case c.Status != CheckCompleted && c.Conclusion != "":
		return fmt.Errorf("check report %q: conclusion %q given with status %q, want status completed", c.Name, c.Conclusion, c.Status)
	case c.Status != CheckQueued && c.Status != CheckInProgress && c.Status != CheckCompleted:
		return fmt.Errorf("check report %q: status %q, want queued, in_progress or completed", c.Name, c.Status)
	}
	return nil
}

// Checks reports checks on commits.
type Checks interface {
	// ReportCheck creates or updates the check named r.Name on r.HeadSHA.
	ReportCheck(ctx context.Context, repo Repo, r CheckReport) error
	// RequiredChecks are the check names the forge requires on a change
	// before it merges into branch (GitHub's branch protection; "*" when
	// every status counts, as with GitLab's "pipelines must succeed");
	// none when nothing is required. A read, never a write.
	RequiredChecks(ctx context.Context, repo Repo, branch string) ([]string, error)
}

// AnyCheck in RequiredChecks' answer means every check counts.
const AnyCheck = "*"

// RepoLister lists the repositories the bot's identity can see (an App
// installation's repositories, or a token's projects).
type RepoLister interface {
	ListRepos(ctx context.Context) ([]Repo, error)
}

// Dispatcher tells another repository something happened: GitHub
// repository_dispatch, GitLab pipeline trigger. Fan-out to repositories
// served by another installation goes this way.
type Dispatcher interface {
	Dispatch(ctx context.Context, repo Repo, eventType string, payload map[string]any) error
}
