package forgetest

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/forge"
)

type commit struct {
	parent  string
	files   map[string][]byte
	message string
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
