// Package forgetest is an in-memory forge for tests: it keeps repositories,
// branches, tags, changes, reviews and comments, enforces the same
// compare-and-swap rules as the real adapters (Contract pins them), and can
// be told to fail any operation.
package forgetest

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/kptbot/kptbot/forge"
)

// Fake is an in-memory forge. Its zero value is not usable; see New.
type Fake struct {
	mu        sync.Mutex
	repos     map[string]*repo
	failures  map[string]error
	nextID    int64
	dispatch  []Dispatched
	reactions []Reaction
	// mergeBlocked holds a branch-protection refusal per repository.
	mergeBlocked map[string]string
	// mergeBlockedFor counts down the attempts a block lasts (absent:
	// until lifted).
	mergeBlockedFor map[string]int
	topics          map[string][]string
	private         map[string]bool
	calls           map[string]int
	// Perms maps "owner/name:login" to a permission (default read).
	Perms map[string]forge.Permission
	// TeamMembers maps "team:login" to membership.
	TeamMembers map[string]bool
	// BotLogin is the author of everything the fake's API writes.
	BotLogin string
}

type repo struct {
	commits  map[string]commit
	branches map[string]string
	tags     map[string]string
	changes  map[int]*forge.Change
	reviews  map[int][]forge.Review
	comments map[int64]*forge.Comment
	onChange map[int64]int // comment id -> change number
	issues   map[int]*forge.Issue
	labels   map[int][]string             // issue labels
	checks   map[string]forge.CheckReport // by headSHA + "\x00" + name
	required map[string][]string          // by branch: the checks its protection requires
	next     int
}

// Dispatched is one Dispatch call the fake received.
type Dispatched struct {
	Repo      string
	EventType string
	Payload   map[string]any
}

// Every role forge.Compose looks for, checked at compile time.
var (
	_ forge.FileReader   = (*Fake)(nil)
	_ forge.TreeReader   = (*Fake)(nil)
	_ forge.CommitLogger = (*Fake)(nil)
	_ forge.RefLister    = (*Fake)(nil)
	_ forge.Pusher       = (*Fake)(nil)
	_ forge.ChangeReader = (*Fake)(nil)
	_ forge.ChangeWriter = (*Fake)(nil)
	_ forge.Tagger       = (*Fake)(nil)
	_ forge.Commenter    = (*Fake)(nil)
	_ forge.Issues       = (*Fake)(nil)
	_ forge.Teams        = (*Fake)(nil)
	_ forge.Permissions  = (*Fake)(nil)
	_ forge.Checks       = (*Fake)(nil)
	_ forge.Dispatcher   = (*Fake)(nil)
	_ forge.RepoLister   = (*Fake)(nil)
)

// New returns an empty fake forge.
func New() *Fake {
	return &Fake{repos: map[string]*repo{}, failures: map[string]error{}, Perms: map[string]forge.Permission{},
		TeamMembers: map[string]bool{}, BotLogin: "kptbot[bot]", mergeBlocked: map[string]string{}, mergeBlockedFor: map[string]int{},
		topics: map[string][]string{}, private: map[string]bool{}, calls: map[string]int{}}
}

// Fail makes every later call of op (a method name, e.g. "Merge") return
// err; a nil err stops failing.
func (f *Fake) Fail(op string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.failures, op)
		return
	}
	f.failures[op] = err
}

// Seed creates a repository whose branch holds files, and returns the
// commit SHA.
func (f *Fake) Seed(r forge.Repo, branch string, files map[string][]byte) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	rp := f.repo(r)
	sha := rp.commit("", files)
	rp.branches[branch] = sha
	return sha
}

func (f *Fake) repo(r forge.Repo) *repo {
	rp, ok := f.repos[r.FullName]
	if !ok {
		rp = &repo{commits: map[string]commit{}, branches: map[string]string{}, tags: map[string]string{},
			changes: map[int]*forge.Change{}, reviews: map[int][]forge.Review{}, comments: map[int64]*forge.Comment{}, checks: map[string]forge.CheckReport{},
			onChange: map[int64]int{}, issues: map[int]*forge.Issue{}, labels: map[int][]string{}, required: map[string][]string{}}
		f.repos[r.FullName] = rp
	}
	return rp
}

func (f *Fake) enter(op string) (func(), error) {
	f.mu.Lock()
	f.calls[op]++
	if err := f.failures[op]; err != nil {
		f.mu.Unlock()
		return nil, err
	}
	return f.mu.Unlock, nil
}

// Permission implements forge.Permissions.
func (f *Fake) Permission(_ context.Context, r forge.Repo, login string) (forge.Permission, error) {
	unlock, err := f.enter("Permission")
	if err != nil {
		return "", err
	}
	defer unlock()
	if p, ok := f.Perms[r.FullName+":"+login]; ok {
		return p, nil
	}
	return forge.PermissionRead, nil
}

// ListRepos implements forge.RepoLister.
func (f *Fake) ListRepos(_ context.Context) ([]forge.Repo, error) {
	unlock, err := f.enter("ListRepos")
	if err != nil {
		return nil, err
	}
	defer unlock()
	out := make([]forge.Repo, 0, len(f.repos))
	for name := range f.repos {
		out = append(out, forge.Repo{FullName: name, DefaultBranch: "main", Topics: f.topics[name], Private: f.private[name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FullName < out[j].FullName })
	return out, nil
}

// Dispatch implements forge.Dispatcher.
func (f *Fake) Dispatch(_ context.Context, r forge.Repo, eventType string, payload map[string]any) error {
	unlock, err := f.enter("Dispatch")
	if err != nil {
		return err
	}
	defer unlock()
	if _, ok := f.repos[r.FullName]; !ok {
		return fmt.Errorf("%w: repository %s", forge.ErrNotFound, r.FullName)
	}
	if eventType == "" {
		return fmt.Errorf("dispatch to %s: event type is required", r.FullName)
	}
	f.dispatch = append(f.dispatch, Dispatched{Repo: r.FullName, EventType: eventType, Payload: payload})
	return nil
}

// Dispatches returns every Dispatch the fake received, in order.
func (f *Fake) Dispatches() []Dispatched {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Dispatched(nil), f.dispatch...)
}

// TeamMember implements forge.Teams.
func (f *Fake) TeamMember(_ context.Context, _ forge.Repo, team, login string) (bool, error) {
	unlock, err := f.enter("TeamMember")
	if err != nil {
		return false, err
	}
	defer unlock()
	return f.TeamMembers[team+":"+login], nil
}

// SetTopics sets a repository's topics, which PackageVariantSet selectors
// match.
func (f *Fake) SetTopics(r forge.Repo, topics ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.repo(r)
	f.topics[r.FullName] = topics
}

// Calls returns how many times op (a method name) was called.
func (f *Fake) Calls(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// SetPrivate makes a repository private (repositories are public until
// then), as ListRepos reports it.
func (f *Fake) SetPrivate(r forge.Repo, private bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.repo(r)
	f.private[r.FullName] = private
}
