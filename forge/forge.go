// Package forge holds kptbot's forge-neutral types: repositories, changes
// (GitHub pull requests, GitLab merge requests), reviews, comments and the
// normalized webhook Event every adapter produces, plus the sentinel errors
// adapters return. The bot depends on these, never on a forge's own types.
package forge

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sentinel errors adapters wrap.
var (
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict: the expected SHA or ref did not match")
	ErrPermission   = errors.New("permission denied")
	ErrNotSupported = errors.New("not supported by this forge")
	// ErrNotMergeable is a merge the forge refused for a reason other than
	// a moved head: branch protection, required checks, conflicts.
	ErrNotMergeable = errors.New("the forge refused the merge")
	// ErrUnauthorized is a webhook whose signature or token is missing or
	// wrong: it must be rejected (401) and never processed.
	ErrUnauthorized = errors.New("webhook signature or token missing or wrong")
	// ErrTooLarge is a webhook body over the size limit (413).
	ErrTooLarge = errors.New("webhook body too large")
	// ErrBadPayload is a webhook body that is not what its headers say (400).
	ErrBadPayload = errors.New("webhook payload cannot be parsed")
)

// ErrTreeTooLarge is a tree read over its TreeLimits: the caller reports
// it rather than holding an attacker-sized tree in memory.
var ErrTreeTooLarge = errors.New("tree over the size cap")

// TreeLimits caps one tree read: how many files, and how many bytes of
// content in all.
type TreeLimits struct {
	MaxFiles int
	MaxBytes int64
}

// Default tree caps: far above a repository of packages, far below what
// would exhaust a server reading three trees per event.
const (
	DefaultMaxTreeFiles = 20000
	DefaultMaxTreeBytes = 128 << 20
)

type treeLimitsKey struct{}

// WithTreeLimits makes tree reads under ctx obey l (zero fields keep the
// defaults).
func WithTreeLimits(ctx context.Context, l TreeLimits) context.Context {
	return context.WithValue(ctx, treeLimitsKey{}, l)
}

// TreeLimitsFrom returns the caps tree reads under ctx obey.
func TreeLimitsFrom(ctx context.Context) TreeLimits {
	l, _ := ctx.Value(treeLimitsKey{}).(TreeLimits)
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxTreeFiles
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxTreeBytes
	}
	return l
}

// Check reports ErrTreeTooLarge when files more files or bytes than l
// allows have been seen.
func (l TreeLimits) Check(files int, bytes int64) error {
	if files > l.MaxFiles {
		return fmt.Errorf("%w: more than %d files", ErrTreeTooLarge, l.MaxFiles)
	}
	if bytes > l.MaxBytes {
		return fmt.Errorf("%w: more than %d bytes of content", ErrTreeTooLarge, l.MaxBytes)
	}
	return nil
}

// RateLimitError says when a rate-limited request may be retried.
type RateLimitError struct {
	RetryAt time.Time
	Reason  string
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limited (%s): retry at %s", e.Reason, e.RetryAt.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrRateLimited) match.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// ErrRateLimited matches any *RateLimitError.
var ErrRateLimited = errors.New("rate limited")

// Forge names.
const (
	GitHub = "github"
	GitLab = "gitlab"
)

// Repo is a repository (GitHub) or project (GitLab).
type Repo struct {
	Forge string `json:"forge"`
	// FullName is owner/name, or group/subgroup/project on GitLab.
	FullName      string   `json:"fullName"`
	ID            int64    `json:"id,omitempty"`
	CloneURL      string   `json:"cloneURL,omitempty"`
	DefaultBranch string   `json:"defaultBranch,omitempty"`
	Topics        []string `json:"topics,omitempty"`
	Private       bool     `json:"private,omitempty"`
}

// User is a forge account.
type User struct {
	Login string `json:"login"`
	ID    int64  `json:"id,omitempty"`
	// Bot is set for app and bot accounts.
	Bot bool `json:"bot,omitempty"`
}

// Change is a pull request or merge request.
type Change struct {
	Number         int      `json:"number"`
	Title          string   `json:"title"`
	Body           string   `json:"body,omitempty"`
	Draft          bool     `json:"draft"`
	State          string   `json:"state"` // open, closed, merged
	HeadRef        string   `json:"headRef"`
	HeadSHA        string   `json:"headSHA"`
	BaseRef        string   `json:"baseRef"`
	BaseSHA        string   `json:"baseSHA,omitempty"`
	Author         User     `json:"author"`
	Labels         []string `json:"labels,omitempty"`
	Merged         bool     `json:"merged,omitempty"`
	MergeCommitSHA string   `json:"mergeCommitSHA,omitempty"`
	URL            string   `json:"url,omitempty"`
	// FromFork is set when the head lives in another repository: such a
	// change never gets secrets or exec functions.
	FromFork bool `json:"fromFork,omitempty"`
}

// ReviewState is a review's verdict.
type ReviewState string

// Review states.
const (
	ReviewApproved         ReviewState = "approved"
	ReviewChangesRequested ReviewState = "changes_requested"
	ReviewCommented        ReviewState = "commented"
	ReviewDismissed        ReviewState = "dismissed"
)

// Review is a review (GitHub) or an approval (GitLab) of a change.
type Review struct {
	ID       int64       `json:"id,omitempty"`
	State    ReviewState `json:"state"`
	Reviewer User        `json:"reviewer"`
	// CommitSHA is the commit that was reviewed: an approval counts only
	// for that commit.
	CommitSHA string `json:"commitSHA,omitempty"`
	Body      string `json:"body,omitempty"`
	// SubmittedAt is when the forge recorded the review (zero when the
	// forge did not say): reviews and command approvals are ordered by it.
	SubmittedAt time.Time `json:"submittedAt,omitempty"`
}

// Comment is a comment on a change.
type Comment struct {
	// ID is the forge's comment ID. Both forges hand them out from one
	// increasing sequence, so a larger ID is a later comment: the bot
	// uses that order, not clocks, to tell which head a command saw.
	ID     int64  `json:"id"`
	Body   string `json:"body"`
	Author User   `json:"author"`
	Edited bool   `json:"edited,omitempty"`
	// CreatedAt is when the forge recorded the comment (zero when the
	// forge did not say).
	CreatedAt time.Time `json:"createdAt,omitempty"`
}

// EventKind is what a webhook delivery means to kptbot.
type EventKind string

// Normalized events.
const (
	EventPing                   EventKind = "ping"
	EventTagPushed              EventKind = "tag.pushed"
	EventTagDeleted             EventKind = "tag.deleted"
	EventBranchPushed           EventKind = "branch.pushed"
	EventBranchDeleted          EventKind = "branch.deleted"
	EventChangeOpened           EventKind = "change.opened"
	EventChangeEdited           EventKind = "change.edited"
	EventChangeSynchronized     EventKind = "change.synchronized"
	EventChangeClosed           EventKind = "change.closed"
	EventChangeMerged           EventKind = "change.merged"
	EventChangeReopened         EventKind = "change.reopened"
	EventChangeReadyForReview   EventKind = "change.ready_for_review"
	EventChangeConvertedToDraft EventKind = "change.converted_to_draft"
	EventReviewSubmitted        EventKind = "review.submitted"
	EventReviewDismissed        EventKind = "review.dismissed"
	EventApproved               EventKind = "change.approved"
	EventUnapproved             EventKind = "change.unapproved"
	EventCommentCreated         EventKind = "comment.created"
	EventCommentEdited          EventKind = "comment.edited"
	EventInstallationAdded      EventKind = "installation.added"
	EventInstallationRemoved    EventKind = "installation.removed"
	EventCheckRerequested       EventKind = "check.rerequested"
	// EventRepoRenamed is a repository renamed or transferred to another
	// owner: Repo is its new name, From its old full name. (A repository
	// created or deleted arrives as EventInstallationAdded or
	// EventInstallationRemoved: the bot can see it, or no longer can.)
	EventRepoRenamed EventKind = "repository.renamed"
	// EventIgnored is a delivery kptbot has no use for; Ignored says why.
	EventIgnored EventKind = "ignored"
)

// Event is a normalized webhook delivery.
type Event struct {
	Forge string    `json:"forge"`
	Kind  EventKind `json:"kind"`
	// DeliveryID deduplicates redeliveries.
	DeliveryID string `json:"deliveryID"`
	// Raw is the forge's event name (X-GitHub-Event, X-Gitlab-Event).
	Raw     string   `json:"raw"`
	Repo    Repo     `json:"repo"`
	Sender  User     `json:"sender"`
	Change  *Change  `json:"change,omitempty"`
	Review  *Review  `json:"review,omitempty"`
	Comment *Comment `json:"comment,omitempty"`
	// Ref, Before and After describe pushes (full ref names).
	Ref    string `json:"ref,omitempty"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// InstallationID is the GitHub App installation the delivery is for.
	InstallationID int64 `json:"installationID,omitempty"`
	// Repos are the repositories an installation event adds or removes.
	Repos []Repo `json:"repos,omitempty"`
	// From is a renamed or transferred repository's old full name.
	From string `json:"from,omitempty"`
	// Ignored is why an EventIgnored delivery was ignored.
	Ignored string `json:"ignored,omitempty"`
}

// ZeroSHA is git's all-zero object name, which pushes use for "no ref".
const ZeroSHA = "0000000000000000000000000000000000000000"
