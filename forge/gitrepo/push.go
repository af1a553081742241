package gitrepo

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/forge"
)

// Push is one branch update for PushFiles.
type Push struct {
	// URL is the repository's git URL (https, or a local path in tests).
	URL  string
	Auth transport.AuthMethod
	// Branch moves to the new commit, but only if it is at OldSHA now
	// (empty: it must not exist).
	Branch, OldSHA string
	// Base is the branch, tag or commit the new commit builds on.
	Base string
	// Files are slash paths; nil content deletes the file.
	Files   map[string][]byte
	Message string
	Author  object.Signature
}

// PushFiles commits p.Files on top of p.Base and pushes p.Branch to it in
// one push, as a compare-and-swap: if the branch is no longer at p.OldSHA
// (someone pushed), nothing is written and the error is forge.ErrConflict.
// It returns the new commit's SHA.
func PushFiles(ctx context.Context, p Push) (string, error) {
	if p.Branch == "" || p.Base == "" {
		return "", fmt.Errorf("pushing to %s: branch and base are required", fetch.Redact(p.URL))
	}
	repo, err := Remote{URL: p.URL, Auth: p.Auth}.fetchRefs(ctx)
	if err != nil {
		return "", err
	}
	ref := plumbing.NewBranchReferenceName(p.Branch)
	cur := ""
	if r, err := repo.Reference(ref, false); err == nil {
		cur = r.Hash().String()
	}
	if cur != p.OldSHA {
		return "", fmt.Errorf("%w: branch %s of %s is at %q, expected %q (someone else pushed; nothing was written)",
			forge.ErrConflict, p.Branch, fetch.Redact(p.URL), cur, p.OldSHA)
	}
	base, err := resolveCommit(repo, p.Base)
	if err != nil {
		return "", fmt.Errorf("%w: base %q in %s: %v", forge.ErrNotFound, p.Base, fetch.Redact(p.URL), err)
	}
	tree, err := applyFiles(repo.Storer, base.TreeHash, p.Files)
	if err != nil {
		return "", fmt.Errorf("building the tree for %s: %w", p.Branch, err)
	}
	sig := p.Author
	if sig.Name == "" {
		sig = object.Signature{Name: "kptbot", Email: "kptbot@localhost"}
	}
	if sig.When.IsZero() {
		sig.When = time.Now()
	}
	c := &object.Commit{Author: sig, Committer: sig, Message: p.Message, TreeHash: tree, ParentHashes: []plumbing.Hash{base.Hash}}
	o := repo.Storer.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return "", err
	}
	h, err := repo.Storer.SetEncodedObject(o)
	if err != nil {
		return "", err
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference(ref, h)); err != nil {
		return "", err
	}
	// The new commit may sit on a new base (a rebase): not a fast-forward,
	// and the lease on the old SHA (none: create only) is what keeps it safe.
	var old plumbing.Hash
	if p.OldSHA != "" {
		old = plumbing.NewHash(p.OldSHA)
	}
	update := []RefUpdate{{Name: ref, Old: old, New: h}}
	op := fmt.Sprintf("pushing %s to %s", p.Branch, fetch.Redact(p.URL))
	if err := PushError(PushRefs(ctx, repo.Storer, p.URL, p.Auth, update), forge.ErrConflict, op); err != nil {
		return "", err
	}
	return h.String(), nil
}

// resolveCommit turns a branch, tag (peeled) or full SHA into a commit.
func resolveCommit(repo *git.Repository, rev string) (*object.Commit, error) {
	for _, name := range []plumbing.ReferenceName{plumbing.NewBranchReferenceName(rev), plumbing.NewTagReferenceName(rev)} {
		r, err := repo.Reference(name, true)
		if err != nil {
			continue
		}
		if t, err := repo.TagObject(r.Hash()); err == nil {
			return t.Commit()
		}
		return repo.CommitObject(r.Hash())
	}
	if !plumbing.IsHash(rev) {
		return nil, plumbing.ErrReferenceNotFound
	}
	return repo.CommitObject(plumbing.NewHash(rev))
}

// applyFiles returns base's tree with files written (nil: removed); only
// the directories on changed paths are rewritten.
func applyFiles(s storer.EncodedObjectStorer, base plumbing.Hash, files map[string][]byte) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	if !base.IsZero() {
		t, err := object.GetTree(s, base)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, t.Entries...)
	}
	here := map[string][]byte{}
	sub := map[string]map[string][]byte{}
	for p, b := range files {
		clean := strings.TrimPrefix(path.Clean("/"+p), "/")
		if clean == "" || clean != p {
			return plumbing.ZeroHash, fmt.Errorf("file path %q: want a clean relative slash path", p)
		}
		if dir, rest, ok := strings.Cut(p, "/"); ok {
			if sub[dir] == nil {
				sub[dir] = map[string][]byte{}
			}
			sub[dir][rest] = b
			continue
		}
		here[p] = b
	}
	byName := map[string]object.TreeEntry{}
	for _, e := range entries {
		byName[e.Name] = e
	}
	for name, b := range here {
		if b == nil {
			delete(byName, name)
			continue
		}
		h, err := writeBlob(s, b)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		mode := filemode.Regular
		if e, ok := byName[name]; ok && e.Mode == filemode.Executable {
			mode = e.Mode
		}
		byName[name] = object.TreeEntry{Name: name, Mode: mode, Hash: h}
	}
	for dir, changes := range sub {
		var childBase plumbing.Hash
		if e, ok := byName[dir]; ok && e.Mode == filemode.Dir {
			childBase = e.Hash
		}
		h, err := applyFiles(s, childBase, changes)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if t, err := object.GetTree(s, h); err != nil || len(t.Entries) == 0 {
			delete(byName, dir) // git has no empty directories
			continue
		}
		byName[dir] = object.TreeEntry{Name: dir, Mode: filemode.Dir, Hash: h}
	}
	out := make([]object.TreeEntry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return sortName(out[i]) < sortName(out[j]) })
	return writeTree(s, out)
}
