package gitrepo

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/kptbot/kptbot/internal/gitfixture"
)

// TestPushError is the table of what a push's result means. The errors
// are those go-git and git receive-pack really return, produced by pushes
// to a bare repository behind git http-backend where they can be, so a
// go-git upgrade that rewords one fails here.
func TestPushError(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	bare := filepath.Join(root, "r.git")
	gitfixture.Git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	gitfixture.Git(t, bare, "config", "http.receivepack", "true")
	wt := gitfixture.WorkTree(t, bare)
	gitfixture.Git(t, wt, "symbolic-ref", "HEAD", "refs/heads/main")
	gitfixture.WriteFiles(t, wt, map[string]string{"a": "1\n"})
	first := gitfixture.CommitAndTag(t, wt, "one", "v1")
	gitfixture.WriteFiles(t, wt, map[string]string{"a": "2\n"})
	second := gitfixture.CommitAndTag(t, wt, "two", "")
	gitfixture.Git(t, wt, "push", "-q", "origin", "main", "v1")
	gitfixture.Git(t, wt, "push", "-q", "origin", first+":refs/heads/old")
	url := gitfixture.HTTPServer(t, root).URL + "/r.git"

	ctx := context.Background()
	repo, err := git.CloneContext(ctx, memory.NewStorage(), nil, &git.CloneOptions{URL: url, NoCheckout: true, Tags: git.AllTags})
	if err != nil {
		t.Fatal(err)
	}
	push := func(spec string, require ...string) error {
		opts := &git.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{config.RefSpec(spec)}}
		for _, r := range require {
			opts.RequireRemoteRefs = append(opts.RequireRemoteRefs, config.RefSpec(r))
		}
		return repo.PushContext(ctx, opts)
	}
	// A branch ref in the clone for each commit, to push from.
	for name, sha := range map[string]string{"one": first, "two": second} {
		if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(name), plumbing.NewHash(sha))); err != nil {
			t.Fatal(err)
		}
	}
	// A remote that refuses a forced non-fast-forward itself.
	denying := filepath.Join(root, "deny.git")
	gitfixture.Git(t, root, "clone", "-q", "--bare", bare, denying)
	gitfixture.Git(t, denying, "config", "http.receivepack", "true")
	gitfixture.Git(t, denying, "config", "receive.denyNonFastForwards", "true")
	if err := os.WriteFile(filepath.Join(denying, "hooks", "pre-receive"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "deny", URLs: []string{strings.TrimSuffix(url, "r.git") + "deny.git"}}); err != nil {
		t.Fatal(err)
	}
	// A server where another writer creates a ref between receive-pack's
	// ref advertisement and the pushed commands, so only receive-pack's
	// own compare-and-swap sees it.
	var strike atomic.Pointer[string]
	backend := gitfixture.HTTPHandler(t, root)
	racing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if tag := strike.Swap(nil); tag != nil {
				gitfixture.Git(t, bare, "tag", *tag, first)
			}
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(racing.Close)
	racePush := func(tag string, updates ...RefUpdate) error {
		strike.Store(&tag)
		return PushRefs(ctx, repo.Storer, racing.URL+"/r.git", nil, updates)
	}
	h1, h2 := plumbing.NewHash(first), plumbing.NewHash(second)
	errConflict := errors.New("conflict sentinel")
	for _, tc := range []struct {
		name     string
		err      func() error
		conflict bool
		ok       bool
	}{
		{"pushed", func() error { return push("refs/heads/two:refs/heads/new") }, false, true},
		{"already up to date", func() error { return push("refs/heads/two:refs/heads/main") }, false, true},
		{"lease lost", func() error { return push("+refs/heads/one:refs/heads/main", first+":refs/heads/main") }, true, false},
		{"lease on a branch that must not exist", func() error {
			return push("refs/heads/one:refs/heads/main", "0000000000000000000000000000000000000000:refs/heads/main")
		}, true, false},
		{"non-fast-forward", func() error { return push("refs/heads/one:refs/heads/main") }, true, false},
		{"remote refuses a non-fast-forward", func() error {
			return repo.PushContext(ctx, &git.PushOptions{RemoteName: "deny", RefSpecs: []config.RefSpec{"+refs/heads/one:refs/heads/main"}})
		}, true, false},
		{"create only: a tag at an ancestor is not fast-forwarded", func() error {
			return PushRefs(ctx, repo.Storer, url, nil, []RefUpdate{{Name: "refs/tags/v1", New: h2}})
		}, true, false},
		{"create only: the tag already there", func() error {
			return PushRefs(ctx, repo.Storer, url, nil, []RefUpdate{{Name: "refs/tags/v1", New: h1}})
		}, false, true},
		{"compare-and-swap on a branch", func() error {
			return PushRefs(ctx, repo.Storer, url, nil, []RefUpdate{{Name: "refs/heads/old", Old: h1, New: h2}})
		}, false, true},
		{"compare-and-swap on a branch that moved", func() error {
			return PushRefs(ctx, repo.Storer, url, nil, []RefUpdate{{Name: "refs/heads/old", Old: h1, New: h1}, {Name: "refs/heads/main", Old: h1, New: h2}})
		}, true, false},
		{"receive-pack: failed to update ref", func() error {
			return racePush("race1", RefUpdate{Name: "refs/tags/race1", New: h2})
		}, true, false},
		{"receive-pack: atomic transaction failed", func() error {
			return racePush("race2", RefUpdate{Name: "refs/tags/race2", New: h2}, RefUpdate{Name: "refs/heads/race2", New: h2})
		}, true, false},
		{"receive-pack: already exists", func() error {
			return (&packp.CommandStatus{ReferenceName: "refs/tags/v1", Status: "already exists"}).Error()
		}, true, false},
		{"receive-pack: rejected", func() error {
			return (&packp.CommandStatus{ReferenceName: "refs/heads/main", Status: "rejected"}).Error()
		}, true, false},
		{"not a conflict: hook declined", func() error {
			return (&packp.CommandStatus{ReferenceName: "refs/heads/main", Status: "pre-receive hook declined"}).Error()
		}, false, false},
		{"not a conflict: no repository", func() error {
			_, err := git.CloneContext(ctx, memory.NewStorage(), nil, &git.CloneOptions{URL: url + "-missing"})
			return err
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.err()
			got := PushError(raw, errConflict, "pushing to R")
			switch {
			case tc.ok:
				if got != nil {
					t.Fatalf("PushError(%v) = %v, want nil", raw, got)
				}
			case got == nil:
				t.Fatalf("PushError(%v) = nil, want an error", raw)
			case errors.Is(got, errConflict) != tc.conflict:
				t.Fatalf("PushError(%v) = %v: conflict %v, want %v", raw, got, errors.Is(got, errConflict), tc.conflict)
			case !tc.conflict && !errors.Is(got, raw):
				t.Fatalf("PushError(%v) = %v does not wrap the push's error", raw, got)
			case !strings.HasPrefix(strings.TrimPrefix(got.Error(), errConflict.Error()+": "), "pushing to R: "):
				t.Fatalf("PushError(%v) = %q does not name the operation", raw, got)
			}
		})
	}
}
