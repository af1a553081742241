package forgetest

import (
	"context"
	"fmt"
	"sort"

	"github.com/kptbot/kptbot/forge"
)

// Review adds a review to a change, as a reviewer would.
func (f *Fake) Review(r forge.Repo, number int, rv forge.Review) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rp := f.repo(r)
	rp.reviews[number] = append(rp.reviews[number], rv)
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

// RequireChecks makes branch protection require the named checks on
// changes into branch (none: nothing required).
func (f *Fake) RequireChecks(r forge.Repo, branch string, names ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.repo(r).required[branch] = names
}

// RequiredChecks implements forge.Checks.
func (f *Fake) RequiredChecks(_ context.Context, r forge.Repo, branch string) ([]string, error) {
	unlock, err := f.enter("RequiredChecks")
	if err != nil {
		return nil, err
	}
	defer unlock()
	return append([]string(nil), f.repo(r).required[branch]...), nil
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

// SetAuthor sets a change's author, as if a human had opened it.
func (f *Fake) SetAuthor(r forge.Repo, number int, u forge.User) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.repo(r).changes[number]; ok {
		c.Author = u
	}
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

// BlockMerges makes merges in r fail with ErrNotMergeable and reason, as
// branch protection would; "" lifts the block.
func (f *Fake) BlockMerges(r forge.Repo, reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mergeBlocked[r.FullName] = reason
}

// BlockMergesFor refuses the next n merges in r with reason, as a forge
// still computing mergeability does.
func (f *Fake) BlockMergesFor(r forge.Repo, reason string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mergeBlocked[r.FullName] = reason
	f.mergeBlockedFor[r.FullName] = n
}
