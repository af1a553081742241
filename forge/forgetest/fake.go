// Package forgetest is an in-memory forge for tests: it keeps repositories,
// branches, tags, changes, reviews and comments, enforces the same
// compare-and-swap rules as the real adapters (Contract pins them), and can
// be told to fail any operation.
package forgetest

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
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

type commit struct {
	parent  string
	files   map[string][]byte
	message string
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

// Review adds a review to a change, as a reviewer would.
func (f *Fake) Review(r forge.Repo, number int, rv forge.Review) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rp := f.repo(r)
	rp.reviews[number] = append(rp.reviews[number], rv)
}

func (f *Fake) repo(r forge.Repo) *repo {
	rp, ok := f.repos[r.FullName]
	if !ok {
		rp = &repo{commits: map[string]commit{}, branches: map[string]string{}, tags: map[string]string{},
			changes: map[int]*forge.Change{}, reviews: map[int][]forge.Review{}, comments: map[int64]*forge.Comment{}, checks: map[string]forge.CheckReport{},
			onChange: map[int64]int{}, issues: map[int]*forge.Issue{}, labels: map[int][]string{}}
		f.repos[r.FullName] = rp
	}
	return rp
}

func (rp *repo) commit(parent string, files map[string][]byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "parent %s\n", parent)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(h, "%s %x\n", n, sha1.Sum(files[n]))
	}
	sha := hex.EncodeToString(h.Sum(nil))
	rp.commits[sha] = commit{parent: parent, files: files}
	return sha
}

// resolve turns a branch, tag or SHA into a commit SHA.
func (rp *repo) resolve(ref string) (string, bool) {
	if sha, ok := rp.branches[ref]; ok {
		return sha, true
	}
	if sha, ok := rp.tags[ref]; ok {
		return sha, true
	}
	_, ok := rp.commits[ref]
	return ref, ok
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

// ReadFile implements forge.FileReader.
func (f *Fake) ReadFile(_ context.Context, r forge.Repo, ref, path string) ([]byte, error) {
	unlock, err := f.enter("ReadFile")
	if err != nil {
		return nil, err
	}
	defer unlock()
	rp := f.repo(r)
	sha, ok := rp.resolve(ref)
	if !ok {
		return nil, fmt.Errorf("%w: ref %q in %s", forge.ErrNotFound, ref, r.FullName)
	}
	b, ok := rp.commits[sha].files[path]
	if !ok {
		return nil, fmt.Errorf("%w: %s at %s in %s", forge.ErrNotFound, path, ref, r.FullName)
	}
	return b, nil
}

// ListTags implements forge.RefLister.
func (f *Fake) ListTags(_ context.Context, r forge.Repo) ([]forge.Tag, error) {
	unlock, err := f.enter("ListTags")
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []forge.Tag
	for n, sha := range f.repo(r).tags {
		out = append(out, forge.Tag{Name: n, SHA: sha})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ListBranches implements forge.RefLister.
func (f *Fake) ListBranches(_ context.Context, r forge.Repo) ([]forge.Branch, error) {
	unlock, err := f.enter("ListBranches")
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []forge.Branch
	for n, sha := range f.repo(r).branches {
		out = append(out, forge.Branch{Name: n, SHA: sha})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// PushFiles implements forge.Pusher.
func (f *Fake) PushFiles(_ context.Context, r forge.Repo, branch, oldSHA, base string, files map[string][]byte, message string) (string, error) {
	unlock, err := f.enter("PushFiles")
	if err != nil {
		return "", err
	}
	defer unlock()
	rp := f.repo(r)
	if cur := rp.branches[branch]; cur != oldSHA {
		return "", fmt.Errorf("%w: branch %s is at %q, expected %q", forge.ErrConflict, branch, cur, oldSHA)
	}
	baseSHA, ok := rp.resolve(base)
	if !ok {
		return "", fmt.Errorf("%w: base %q", forge.ErrNotFound, base)
	}
	merged := map[string][]byte{}
	for n, b := range rp.commits[baseSHA].files {
		merged[n] = b
	}
	for n, b := range files {
		if b == nil {
			delete(merged, n)
			continue
		}
		merged[n] = b
	}
	sha := rp.commit(baseSHA, merged)
	c := rp.commits[sha]
	c.message = message
	rp.commits[sha] = c
	rp.branches[branch] = sha
	for _, c := range rp.changes {
		if c.HeadRef == branch && c.State == "open" {
			c.HeadSHA = sha
		}
	}
	return sha, nil
}

// ListChangesByHead implements forge.ChangeReader.
func (f *Fake) ListChangesByHead(_ context.Context, r forge.Repo, head string) ([]forge.Change, error) {
	unlock, err := f.enter("ListChangesByHead")
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []forge.Change
	for _, c := range f.repo(r).changes {
		if c.HeadRef == head {
			out = append(out, *c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// OpenChange implements forge.ChangeWriter.
func (f *Fake) OpenChange(_ context.Context, r forge.Repo, s forge.ChangeSpec) (forge.Change, error) {
	unlock, err := f.enter("OpenChange")
	if err != nil {
		return forge.Change{}, err
	}
	defer unlock()
	rp := f.repo(r)
	head, ok := rp.branches[s.Head]
	if !ok {
		return forge.Change{}, fmt.Errorf("%w: head branch %q", forge.ErrNotFound, s.Head)
	}
	for _, c := range rp.changes {
		if c.HeadRef == s.Head && c.State == "open" {
			return forge.Change{}, fmt.Errorf("%w: change #%d is already open for %s", forge.ErrConflict, c.Number, s.Head)
		}
	}
	rp.next++
	c := &forge.Change{Number: rp.next, Title: s.Title, Body: s.Body, Draft: s.Draft, State: "open",
		HeadRef: s.Head, HeadSHA: head, BaseRef: s.Base, BaseSHA: rp.branches[s.Base], Labels: s.Labels, Author: forge.User{Login: f.BotLogin, Bot: true}}
	rp.changes[c.Number] = c
	return *c, nil
}

// UpdateChange implements forge.ChangeWriter.
func (f *Fake) UpdateChange(_ context.Context, r forge.Repo, number int, u forge.ChangeUpdate) (forge.Change, error) {
	unlock, err := f.enter("UpdateChange")
	if err != nil {
		return forge.Change{}, err
	}
	defer unlock()
	c, ok := f.repo(r).changes[number]
	if !ok {
		return forge.Change{}, fmt.Errorf("%w: change #%d", forge.ErrNotFound, number)
	}
	if u.Title != nil {
		c.Title = *u.Title
	}
	if u.Body != nil {
		c.Body = *u.Body
	}
	if u.Draft != nil {
		c.Draft = *u.Draft
	}
	if u.Labels != nil {
		c.Labels = u.Labels
	}
	return *c, nil
}

// CloseChange implements forge.ChangeWriter.
func (f *Fake) CloseChange(_ context.Context, r forge.Repo, number int) error {
	unlock, err := f.enter("CloseChange")
	if err != nil {
		return err
	}
	defer unlock()
	c, ok := f.repo(r).changes[number]
	if !ok {
		return fmt.Errorf("%w: change #%d", forge.ErrNotFound, number)
	}
	c.State = "closed"
	return nil
}

// Merge implements forge.ChangeWriter: it merges exactly expectedHeadSHA.
func (f *Fake) Merge(_ context.Context, r forge.Repo, number int, expectedHeadSHA, _ string) (string, error) {
	unlock, err := f.enter("Merge")
	if err != nil {
		return "", err
	}
	defer unlock()
	rp := f.repo(r)
	c, ok := rp.changes[number]
	if !ok {
		return "", fmt.Errorf("%w: change #%d", forge.ErrNotFound, number)
	}
	if c.State != "open" || c.Draft {
		return "", fmt.Errorf("%w: change #%d is %s (draft %v)", forge.ErrNotMergeable, number, c.State, c.Draft)
	}
	if err := f.mergeBlocked[r.FullName]; err != "" {
		if n, ok := f.mergeBlockedFor[r.FullName]; ok {
			if n <= 1 {
				delete(f.mergeBlocked, r.FullName)
				delete(f.mergeBlockedFor, r.FullName)
			} else {
				f.mergeBlockedFor[r.FullName] = n - 1
			}
		}
		return "", fmt.Errorf("%w: %s", forge.ErrNotMergeable, err)
	}
	if c.HeadSHA != expectedHeadSHA {
		return "", fmt.Errorf("%w: change #%d head is %s, not the approved %s", forge.ErrConflict, number, c.HeadSHA, expectedHeadSHA)
	}
	sha := rp.commit(rp.branches[c.BaseRef], rp.mergeFiles(rp.branches[c.BaseRef], c.HeadSHA))
	rp.branches[c.BaseRef] = sha
	delete(rp.branches, "") // never a real branch
	c.State, c.Merged, c.MergeCommitSHA = "merged", true, sha
	return sha, nil
}

// ListReviews implements forge.ChangeReader.
func (f *Fake) ListReviews(_ context.Context, r forge.Repo, number int) ([]forge.Review, error) {
	unlock, err := f.enter("ListReviews")
	if err != nil {
		return nil, err
	}
	defer unlock()
	return append([]forge.Review(nil), f.repo(r).reviews[number]...), nil
}

// CreateTag implements forge.Tagger.
func (f *Fake) CreateTag(_ context.Context, r forge.Repo, name, sha, _ string) error {
	unlock, err := f.enter("CreateTag")
	if err != nil {
		return err
	}
	defer unlock()
	rp := f.repo(r)
	if _, ok := rp.commits[sha]; !ok {
		return fmt.Errorf("%w: commit %s", forge.ErrNotFound, sha)
	}
	if cur, ok := rp.tags[name]; ok {
		if cur == sha {
			return nil
		}
		return fmt.Errorf("%w: tag %s is at %s, not %s", forge.ErrConflict, name, cur, sha)
	}
	rp.tags[name] = sha
	return nil
}

// Comment implements forge.Commenter.
func (f *Fake) Comment(_ context.Context, r forge.Repo, number int, body string) (forge.Comment, error) {
	unlock, err := f.enter("Comment")
	if err != nil {
		return forge.Comment{}, err
	}
	defer unlock()
	rp := f.repo(r)
	if _, ok := rp.changes[number]; !ok {
		return forge.Comment{}, fmt.Errorf("%w: change #%d", forge.ErrNotFound, number)
	}
	return f.addComment(rp, number, forge.User{Login: f.BotLogin, Bot: true}, body), nil
}

// EditComment implements forge.Commenter.
func (f *Fake) EditComment(_ context.Context, r forge.Repo, number int, id int64, body string) error {
	unlock, err := f.enter("EditComment")
	if err != nil {
		return err
	}
	defer unlock()
	rp := f.repo(r)
	c, ok := rp.comments[id]
	if !ok || rp.onChange[id] != number {
		return fmt.Errorf("%w: comment %d on #%d", forge.ErrNotFound, id, number)
	}
	c.Body, c.Edited = body, true
	return nil
}

// React implements forge.Commenter.
func (f *Fake) React(_ context.Context, r forge.Repo, number int, id int64, reaction string) error {
	unlock, err := f.enter("React")
	if err != nil {
		return err
	}
	defer unlock()
	rp := f.repo(r)
	if _, ok := rp.comments[id]; !ok || rp.onChange[id] != number {
		return fmt.Errorf("%w: comment %d on #%d", forge.ErrNotFound, id, number)
	}
	if strings.TrimSpace(reaction) == "" {
		return fmt.Errorf("empty reaction")
	}
	f.reactions = append(f.reactions, Reaction{Repo: r.FullName, Change: number, CommentID: id, Content: reaction})
	return nil
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

// ListTree implements forge.FileReader.
func (f *Fake) ListTree(_ context.Context, r forge.Repo, ref, dir string) ([]string, error) {
	unlock, err := f.enter("ListTree")
	if err != nil {
		return nil, err
	}
	defer unlock()
	rp := f.repo(r)
	sha, ok := rp.resolve(ref)
	if !ok {
		return nil, fmt.Errorf("%w: ref %q in %s", forge.ErrNotFound, ref, r.FullName)
	}
	prefix := strings.Trim(dir, "/")
	if prefix != "" {
		prefix += "/"
	}
	var out []string
	for n := range rp.commits[sha].files {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ReportCheck implements forge.Checks.
func (f *Fake) ReportCheck(_ context.Context, r forge.Repo, c forge.CheckReport) error {
	unlock, err := f.enter("ReportCheck")
	if err != nil {
		return err
	}
	defer unlock()
	if err := c.Validate(); err != nil {
		return err
	}
	rp := f.repo(r)
	if _, ok := rp.commits[c.HeadSHA]; !ok {
		return fmt.Errorf("%w: commit %s", forge.ErrNotFound, c.HeadSHA)
	}
	rp.checks[c.HeadSHA+"\x00"+c.Name] = c
	return nil
}

// Check returns the check named name on sha, as a test reads the forge's UI.
func (f *Fake) Check(r forge.Repo, sha, name string) (forge.CheckReport, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.repo(r).checks[sha+"\x00"+name]
	return c, ok
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

// Reaction is one React call the fake received.
type Reaction struct {
	Repo      string
	Change    int
	CommentID int64
	Content   string
}

// Reactions returns every reaction added, in order.
func (f *Fake) Reactions() []Reaction {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Reaction(nil), f.reactions...)
}

func (f *Fake) addComment(rp *repo, number int, author forge.User, body string) forge.Comment {
	f.nextID++
	c := &forge.Comment{ID: f.nextID, Body: body, Author: author}
	rp.comments[c.ID] = c
	rp.onChange[c.ID] = number
	return *c
}

// AddComment adds a comment by author to a change, as a human would, and
// returns it (for building the webhook event that announces it).
func (f *Fake) AddComment(r forge.Repo, number int, author forge.User, body string) forge.Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addComment(f.repo(r), number, author, body)
}

// Comments returns a change's comments, oldest first.
func (f *Fake) Comments(r forge.Repo, number int) []forge.Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.comments(f.repo(r), number)
}

func (f *Fake) comments(rp *repo, number int) []forge.Comment {
	var out []forge.Comment
	for id, c := range rp.comments {
		if rp.onChange[id] == number {
			out = append(out, *c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ListComments implements forge.Commenter.
func (f *Fake) ListComments(_ context.Context, r forge.Repo, number int) ([]forge.Comment, error) {
	unlock, err := f.enter("ListComments")
	if err != nil {
		return nil, err
	}
	defer unlock()
	rp := f.repo(r)
	if _, ok := rp.changes[number]; !ok {
		if _, ok := rp.issues[number]; !ok {
			return nil, fmt.Errorf("%w: change #%d", forge.ErrNotFound, number)
		}
	}
	return f.comments(rp, number), nil
}

// SetAuthor sets a change's author, as if a human had opened it.
func (f *Fake) SetAuthor(r forge.Repo, number int, u forge.User) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.repo(r).changes[number]; ok {
		c.Author = u
	}
}

// ancestors returns sha and every commit it descends from.
func (rp *repo) ancestors(sha string) map[string]bool {
	seen := map[string]bool{}
	for sha != "" && !seen[sha] {
		seen[sha] = true
		sha = rp.commits[sha].parent
	}
	return seen
}

// mergeFiles is a file-level three-way merge: base's files plus every file
// head changed since the fork point, as a forge's merge would give when the
// two sides touch different files.
func (rp *repo) mergeFiles(base, head string) map[string][]byte {
	inBase := rp.ancestors(base)
	fork := head
	for fork != "" && !inBase[fork] {
		fork = rp.commits[fork].parent
	}
	out := map[string][]byte{}
	for n, b := range rp.commits[base].files {
		out[n] = b
	}
	forkFiles, headFiles := rp.commits[fork].files, rp.commits[head].files
	for n, b := range headFiles {
		if old, ok := forkFiles[n]; !ok || string(old) != string(b) {
			out[n] = b
		}
	}
	for n := range forkFiles {
		if _, ok := headFiles[n]; !ok {
			delete(out, n)
		}
	}
	return out
}

// ReadTree implements forge.TreeReader.
func (f *Fake) ReadTree(ctx context.Context, r forge.Repo, ref, dir string) (forge.Snapshot, error) {
	unlock, err := f.enter("ReadTree")
	if err != nil {
		return forge.Snapshot{}, err
	}
	defer unlock()
	rp := f.repo(r)
	sha, ok := rp.resolve(ref)
	if !ok {
		return forge.Snapshot{}, fmt.Errorf("%w: ref %q in %s", forge.ErrNotFound, ref, r.FullName)
	}
	prefix := strings.Trim(dir, "/")
	if prefix != "" {
		prefix += "/"
	}
	snap := forge.Snapshot{Commit: sha, Files: map[string][]byte{}}
	var total int64
	for n, b := range rp.commits[sha].files {
		if strings.HasPrefix(n, prefix) {
			snap.Files[strings.TrimPrefix(n, prefix)] = b
			total += int64(len(b))
		}
	}
	if err := forge.TreeLimitsFrom(ctx).Check(len(snap.Files), total); err != nil {
		return forge.Snapshot{}, fmt.Errorf("reading %s at %s in %s: %w", dir, ref, r.FullName, err)
	}
	return snap, nil
}

// DeleteBranch implements forge.Pusher.
func (f *Fake) DeleteBranch(_ context.Context, r forge.Repo, branch, expectedSHA string) error {
	unlock, err := f.enter("DeleteBranch")
	if err != nil {
		return err
	}
	defer unlock()
	rp := f.repo(r)
	cur, ok := rp.branches[branch]
	if !ok {
		return nil
	}
	if cur != expectedSHA {
		return fmt.Errorf("%w: branch %s is at %s, expected %s", forge.ErrConflict, branch, cur, expectedSHA)
	}
	delete(rp.branches, branch)
	return nil
}

// ListOpenChanges implements forge.ChangeReader.
func (f *Fake) ListOpenChanges(_ context.Context, r forge.Repo) ([]forge.Change, error) {
	unlock, err := f.enter("ListOpenChanges")
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []forge.Change
	for _, c := range f.repo(r).changes {
		if c.State == "open" {
			out = append(out, *c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// GetChange implements forge.ChangeReader.
func (f *Fake) GetChange(_ context.Context, r forge.Repo, number int) (forge.Change, error) {
	unlock, err := f.enter("GetChange")
	if err != nil {
		return forge.Change{}, err
	}
	defer unlock()
	c, ok := f.repo(r).changes[number]
	if !ok {
		return forge.Change{}, fmt.Errorf("%w: change #%d in %s", forge.ErrNotFound, number, r.FullName)
	}
	return *c, nil
}

// ListIssues implements forge.Issues.
func (f *Fake) ListIssues(_ context.Context, r forge.Repo, label string) ([]forge.Issue, error) {
	unlock, err := f.enter("ListIssues")
	if err != nil {
		return nil, err
	}
	defer unlock()
	rp := f.repo(r)
	var out []forge.Issue
	for n, is := range rp.issues {
		for _, l := range rp.labels[n] {
			if l == label {
				out = append(out, *is)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// OpenIssue implements forge.Issues; issues and changes share numbers, as
// on GitHub.
func (f *Fake) OpenIssue(_ context.Context, r forge.Repo, title, body string, labels []string) (forge.Issue, error) {
	unlock, err := f.enter("OpenIssue")
	if err != nil {
		return forge.Issue{}, err
	}
	defer unlock()
	rp := f.repo(r)
	rp.next++
	is := &forge.Issue{Number: rp.next, Title: title, Body: body}
	rp.issues[is.Number] = is
	rp.labels[is.Number] = append([]string(nil), labels...)
	return *is, nil
}

// EditIssue implements forge.Issues.
func (f *Fake) EditIssue(_ context.Context, r forge.Repo, number int, title, body string) error {
	unlock, err := f.enter("EditIssue")
	if err != nil {
		return err
	}
	defer unlock()
	is, ok := f.repo(r).issues[number]
	if !ok {
		return fmt.Errorf("%w: issue #%d", forge.ErrNotFound, number)
	}
	is.Title, is.Body = title, body
	return nil
}

// Issue returns an issue, as a test reads the forge's UI.
func (f *Fake) Issue(r forge.Repo, number int) (forge.Issue, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	is, ok := f.repo(r).issues[number]
	if !ok {
		return forge.Issue{}, false
	}
	return *is, true
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

// BlockMerges makes merges in r fail with ErrNotMergeable and reason, as
// branch protection would; "" lifts the block.
func (f *Fake) BlockMerges(r forge.Repo, reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mergeBlocked[r.FullName] = reason
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

// BlockMergesFor refuses the next n merges in r with reason, as a forge
// still computing mergeability does.
func (f *Fake) BlockMergesFor(r forge.Repo, reason string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mergeBlocked[r.FullName] = reason
	f.mergeBlockedFor[r.FullName] = n
}

// Log implements forge.CommitLogger by walking first parents.
func (f *Fake) Log(_ context.Context, r forge.Repo, from, to string) ([]forge.Commit, error) {
	unlock, err := f.enter("Log")
	if err != nil {
		return nil, err
	}
	defer unlock()
	rp := f.repo(r)
	head, ok := rp.resolve(to)
	if !ok {
		return nil, fmt.Errorf("%w: %q in %s", forge.ErrNotFound, to, r.FullName)
	}
	stop := map[string]bool{}
	if from != "" {
		base, ok := rp.resolve(from)
		if !ok {
			return nil, fmt.Errorf("%w: %q in %s", forge.ErrNotFound, from, r.FullName)
		}
		stop = rp.ancestors(base)
	}
	var out []forge.Commit
	for sha := head; sha != "" && !stop[sha] && len(out) < 100; sha = rp.commits[sha].parent {
		c := forge.Commit{SHA: sha, Message: rp.commits[sha].message}
		if p := rp.commits[sha].parent; p != "" {
			c.Parents = []string{p}
		}
		out = append(out, c)
	}
	return out, nil
}

// SetPrivate makes a repository private (repositories are public until
// then), as ListRepos reports it.
func (f *Fake) SetPrivate(r forge.Repo, private bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.repo(r)
	f.private[r.FullName] = private
}
