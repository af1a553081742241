package forgetest

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/forge"
)

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
