// Package fetch resolves kpt upstream references (REPO_URI[.git]/PKG_PATH[@VERSION])
// against git repositories and materializes package trees from them, entirely
// through go-git: no git binary is needed, for local paths, file:// URLs and
// http(s) remotes alike.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Repo is an opened git repository: local repositories are read in place,
// remote ones are fetched once into memory.
type Repo struct {
	// URL is the repository as the user wrote it (normalized, without .git
	// stripping), used in messages.
	URL string
	// PushURL is the URL that answered, for remote repositories.
	PushURL string
	repo    *git.Repository
}

// ErrRefNotFound is returned when a version resolves to nothing.
var ErrRefNotFound = errors.New("reference not found")

// Open opens the repository at repoURL. Local paths and file:// URLs are
// opened in place (with or without a ".git" suffix); other URLs are cloned
// into memory with all branches and tags.
func Open(ctx context.Context, repoURL string) (*Repo, error) {
	if p, ok := localPath(repoURL); ok {
		p = strings.TrimSuffix(p, ".git")
		for _, cand := range []string{p, p + ".git"} {
			r, err := git.PlainOpenWithOptions(cand, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
			if err == nil {
				return &Repo{URL: repoURL, repo: r}, nil
			}
			if !errors.Is(err, git.ErrRepositoryNotExists) && !os.IsNotExist(err) {
				return nil, fmt.Errorf("opening git repository %s: %w", cand, err)
			}
		}
		return nil, fmt.Errorf("opening git repository %s: no git repository at %s or %s.git", repoURL, p, p)
	}
	// kpt records repositories without their ".git" suffix and clones
	// "<repo>.git"; servers differ in whether they accept both, so try the
	// suffixed form first.
	var firstErr error
	for _, cand := range cloneCandidates(repoURL) {
		r, err := openRemote(ctx, cand)
		if err == nil {
			return &Repo{URL: repoURL, PushURL: cand, repo: r}, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

func cloneCandidates(repoURL string) []string {
	if strings.HasSuffix(repoURL, ".git") {
		return []string{repoURL}
	}
	return []string{repoURL + ".git", repoURL}
}

func openRemote(ctx context.Context, repoURL string) (*git.Repository, error) {
	auth, err := gitAuth(repoURL, os.Getenv)
	if err != nil {
		return nil, err
	}
	r, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		return nil, fmt.Errorf("initializing in-memory clone of %s: %w", repoURL, err)
	}
	_, err = r.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{repoURL}})
	if err != nil {
		return nil, fmt.Errorf("configuring remote %s: %w", repoURL, err)
	}
	err = r.FetchContext(ctx, &git.FetchOptions{
		RemoteName: "origin",
		RefSpecs: []config.RefSpec{
			"+refs/heads/*:refs/heads/*",
			"+refs/tags/*:refs/tags/*",
		},
		Auth: auth,
		Tags: git.NoTags,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return nil, fmt.Errorf("fetching %s: the repository is empty", redact(repoURL))
		}
		return nil, fmt.Errorf("fetching %s: %w", redact(repoURL), err)
	}
	return r, nil
}

// localPath reports whether u names a local repository, and its path.
func localPath(u string) (string, bool) {
	if strings.HasPrefix(u, "file://") {
		pu, err := url.Parse(u)
		if err != nil {
			return strings.TrimPrefix(u, "file://"), true
		}
		return pu.Path, true
	}
	if strings.Contains(u, "://") || isSCPLike(u) {
		return "", false
	}
	return u, true
}

// isSCPLike matches git's user@host:path form.
func isSCPLike(u string) bool {
	at := strings.Index(u, "@")
	colon := strings.Index(u, ":")
	return at > 0 && colon > at && !strings.Contains(u[:colon], "/")
}

// Redact removes any password from a URL so it can be logged.
func Redact(u string) string { return redact(u) }

// redact removes any password from a URL so it can be logged.
func redact(u string) string {
	pu, err := url.Parse(u)
	if err != nil || pu.User == nil {
		return u
	}
	if _, has := pu.User.Password(); has {
		pu.User = url.UserPassword(pu.User.Username(), "REDACTED")
	}
	return pu.String()
}

// Resolved is the outcome of resolving a version in a repository.
type Resolved struct {
	// Ref is the ref that matched: a package tag such as "basens/v1", a
	// branch or tag name, or the commit itself.
	Ref string `json:"ref"`
	// Commit is the full commit SHA.
	Commit string `json:"commit"`
}

// Resolve resolves version for the package at dir the way kpt does: a tag
// "<dir>/<version>" (trying each parent of dir in turn) wins, then a branch
// or tag named version, then a commit SHA (full or abbreviated). An empty
// version means the default branch (HEAD).
func (r *Repo) Resolve(ctx context.Context, dir, version string) (Resolved, error) {
	if version == "" {
		head, err := r.repo.Head()
		if err != nil {
			return Resolved{}, fmt.Errorf("resolving default branch of %s: %w", redact(r.URL), err)
		}
		return Resolved{Ref: head.Name().Short(), Commit: head.Hash().String()}, nil
	}
	parts := strings.Split(strings.Trim(path.Clean("/"+dir), "/"), "/")
	for len(parts) > 0 && parts[0] != "" {
		tag := path.Join(path.Join(parts...), version)
		if h, err := r.tagCommit(tag); err == nil {
			return Resolved{Ref: tag, Commit: h.String()}, nil
		}
		parts = parts[:len(parts)-1]
	}
	if ref, err := r.repo.Reference(plumbing.NewBranchReferenceName(version), true); err == nil {
		return Resolved{Ref: version, Commit: ref.Hash().String()}, nil
	}
	if ref, err := r.repo.Reference(plumbing.NewRemoteReferenceName("origin", version), true); err == nil {
		return Resolved{Ref: version, Commit: ref.Hash().String()}, nil
	}
	if h, err := r.tagCommit(version); err == nil {
		return Resolved{Ref: version, Commit: h.String()}, nil
	}
	if isHex(version) && len(version) >= 4 {
		if h, err := r.repo.ResolveRevision(plumbing.Revision(version)); err == nil {
			if _, err := r.repo.CommitObject(*h); err == nil {
				return Resolved{Ref: version, Commit: h.String()}, nil
			}
		}
	}
	return Resolved{}, fmt.Errorf("resolving %q in %s: no tag %q, branch, tag or commit %q: %w",
		version, redact(r.URL), path.Join(strings.Trim(dir, "/"), version), version, ErrRefNotFound)
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return s != ""
}

// tagCommit peels a tag (lightweight or annotated) to its commit.
func (r *Repo) tagCommit(tag string) (plumbing.Hash, error) {
	ref, err := r.repo.Reference(plumbing.NewTagReferenceName(tag), true)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if to, err := r.repo.TagObject(ref.Hash()); err == nil {
		c, err := to.Commit()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return c.Hash, nil
	}
	return ref.Hash(), nil
}

// Tree returns the files under dir at commit, keyed by slash-separated path
// relative to dir. It fails if dir does not exist at that commit.
func (r *Repo) Tree(ctx context.Context, commit, dir string) (map[string][]byte, error) {
	c, err := r.repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return nil, fmt.Errorf("reading commit %s of %s: %w", commit, redact(r.URL), err)
	}
	root, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading tree of commit %s: %w", commit, err)
	}
	rel := strings.Trim(path.Clean("/"+dir), "/")
	t := root
	if rel != "" {
		t, err = root.Tree(rel)
		if err != nil {
			if errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
				return nil, fmt.Errorf("package directory %q does not exist in %s at %s", "/"+rel, redact(r.URL), short(commit))
			}
			return nil, fmt.Errorf("reading %q at %s: %w", rel, short(commit), err)
		}
	}
	files := map[string][]byte{}
	walker := object.NewTreeWalker(t, true, nil)
	defer walker.Close()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name, entry, err := walker.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("walking %q at %s: %w", rel, short(commit), err)
		}
		if !entry.Mode.IsFile() {
			continue
		}
		if entry.Mode == filemode.Symlink {
			continue // kpt does not copy symlinks either
		}
		blob, err := r.repo.BlobObject(entry.Hash)
		if err != nil {
			return nil, fmt.Errorf("reading %s at %s: %w", name, short(commit), err)
		}
		rd, err := blob.Reader()
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(rd)
		rd.Close()
		if err != nil {
			return nil, fmt.Errorf("reading %s at %s: %w", name, short(commit), err)
		}
		files[name] = b
	}
	return files, nil
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// GitRef is a branch or tag and the commit it points at (tags peeled).
type GitRef struct {
	Name   string // full name, e.g. refs/tags/basens/v1
	Commit string
}

// Refs lists the repository's branches and tags.
func (r *Repo) Refs() ([]GitRef, error) {
	it, err := r.repo.References()
	if err != nil {
		return nil, fmt.Errorf("listing refs of %s: %w", redact(r.URL), err)
	}
	var out []GitRef
	err = it.ForEach(func(ref *plumbing.Reference) error {
		name := ref.Name()
		if !name.IsBranch() && !name.IsTag() {
			return nil
		}
		if ref.Type() != plumbing.HashReference {
			return nil
		}
		h := ref.Hash()
		if name.IsTag() {
			if c, err := r.tagCommit(name.Short()); err == nil {
				h = c
			}
		}
		out = append(out, GitRef{Name: name.String(), Commit: h.String()})
		return nil
	})
	return out, err
}

// CommitMessage returns a commit's full message.
func (r *Repo) CommitMessage(commit string) (string, error) {
	c, err := r.repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return "", fmt.Errorf("reading commit %s of %s: %w", short(commit), redact(r.URL), err)
	}
	return c.Message, nil
}

// Git exposes the underlying go-git repository to the forge layer, which
// writes branches and tags with compare-and-swap.
func (r *Repo) Git() *git.Repository { return r.repo }

// IsLocal reports whether the repository is read and written in place
// (a local path or file:// URL) rather than fetched into memory.
func (r *Repo) IsLocal() bool {
	_, ok := localPath(r.URL)
	return ok
}
