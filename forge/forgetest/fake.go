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
	mu       sync.Mutex
	repos    map[string]*repo
	failures map[string]error
	nextID   int64
	dispatch []Dispatched
	// Perms maps "owner/name:login" to a permission (default read).
	Perms map[string]forge.Permission
}

type commit struct {
	parent string
	files  map[string][]byte
}

type repo struct {
	commits  map[string]commit
	branches map[string]string
	tags     map[string]string
	changes  map[int]*forge.Change
	reviews  map[int][]forge.Review
	comments map[int64]*forge.Comment
	checks   map[string]forge.CheckReport // by headSHA + "\x00" + name
	next     int
}

// Dispatched is one Dispatch call the fake received.
type Dispatched struct {
	Repo      string
	EventType string
	Payload   map[string]any
}

var _ forge.Forge = (*Fake)(nil)

// New returns an empty fake forge.
func New() *Fake {
	return &Fake{repos: map[string]*repo{}, failures: map[string]error{}, Perms: map[string]forge.Permission{}}
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
			changes: map[int]*forge.Change{}, reviews: map[int][]forge.Review{}, comments: map[int64]*forge.Comment{}, checks: map[string]forge.CheckReport{}}
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
func (f *Fake) PushFiles(_ context.Context, r forge.Repo, branch, oldSHA, base string, files map[string][]byte, _ string) (string, error) {
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
	rp.branches[branch] = sha
	for _, c := range rp.changes {
		if c.HeadRef == branch && c.State == "open" {
			c.HeadSHA = sha
		}
	}
	return sha, nil
}

// ListChangesByHead implements forge.Changes.
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

// OpenChange implements forge.Changes.
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
		HeadRef: s.Head, HeadSHA: head, BaseRef: s.Base, BaseSHA: rp.branches[s.Base], Labels: s.Labels}
	rp.changes[c.Number] = c
	return *c, nil
}

// UpdateChange implements forge.Changes.
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

// CloseChange implements forge.Changes.
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

// Merge implements forge.Changes: it merges exactly expectedHeadSHA.
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
		return "", fmt.Errorf("%w: change #%d is %s (draft %v)", forge.ErrConflict, number, c.State, c.Draft)
	}
	if c.HeadSHA != expectedHeadSHA {
		return "", fmt.Errorf("%w: change #%d head is %s, not the approved %s", forge.ErrConflict, number, c.HeadSHA, expectedHeadSHA)
	}
	sha := rp.commit(rp.branches[c.BaseRef], rp.commits[c.HeadSHA].files)
	rp.branches[c.BaseRef] = sha
	c.State, c.Merged, c.MergeCommitSHA = "merged", true, sha
	return sha, nil
}

// ListReviews implements forge.Changes.
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
	f.nextID++
	c := &forge.Comment{ID: f.nextID, Body: body, Author: forge.User{Login: "kptbot[bot]", Bot: true}}
	rp.comments[c.ID] = c
	return *c, nil
}

// EditComment implements forge.Commenter.
func (f *Fake) EditComment(_ context.Context, r forge.Repo, id int64, body string) error {
	unlock, err := f.enter("EditComment")
	if err != nil {
		return err
	}
	defer unlock()
	c, ok := f.repo(r).comments[id]
	if !ok {
		return fmt.Errorf("%w: comment %d", forge.ErrNotFound, id)
	}
	c.Body, c.Edited = body, true
	return nil
}

// React implements forge.Commenter.
func (f *Fake) React(_ context.Context, r forge.Repo, id int64, reaction string) error {
	unlock, err := f.enter("React")
	if err != nil {
		return err
	}
	defer unlock()
	if _, ok := f.repo(r).comments[id]; !ok {
		return fmt.Errorf("%w: comment %d", forge.ErrNotFound, id)
	}
	if strings.TrimSpace(reaction) == "" {
		return fmt.Errorf("empty reaction")
	}
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
		out = append(out, forge.Repo{FullName: name, DefaultBranch: "main"})
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
