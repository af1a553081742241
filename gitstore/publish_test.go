package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/internal/gitfixture"
)

// TestPublishOverHTTP approves a proposal over git http-backend while the
// remote changes under the approval, with and without atomic pushes: a
// published tag is never moved, the registered branch never gets an
// approval without its tag nor a tag without its commit on the branch,
// and what a failure leaves is repaired by the next run.
func TestPublishOverHTTP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		atomic bool
		// race changes the remote after the approving store read it.
		race func(t *testing.T, bare string)
		// check looks at the remote after the raced approval failed with err.
		check func(t *testing.T, bare, tip string, err error)
		// next is what a fresh approval of the same proposal publishes.
		next string
	}{
		{"tag taken at the branch tip", true, takeTag, tagKept, "ns/v2"},
		{"tag taken at the branch tip, no atomic push", false, takeTag, tagKept, "ns/v2"},
		{"branch moved", true, moveMain, nothingPublished, "ns/v1"},
		{"branch moved, no atomic push: the tag is taken back", false, moveMain, nothingPublished, "ns/v1"},
		{"proposal deletion refused, no atomic push", false, refuseDeletes, publishedWithProposal, "ns/v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, bare := newStore(t)
			gitfixture.Git(t, bare, "config", "http.receivepack", "true")
			if !tc.atomic {
				gitfixture.Git(t, bare, "config", "receive.advertiseAtomic", "false")
			}
			url := gitfixture.HTTPServer(t, filepath.Dir(bare)).URL + "/" + filepath.Base(bare)
			ctx := context.Background()
			s, err := OpenStore(ctx, url, "main")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreateDraft(ctx, "ns", "w", nsPackage, []byte(`{"type":"init"}`)); err != nil {
				t.Fatal(err)
			}
			if err := s.Propose(ctx, "ns", "w"); err != nil {
				t.Fatal(err)
			}
			tip := gitfixture.Git(t, bare, "rev-parse", "main")
			tc.race(t, bare)
			_, err = s.Approve(ctx, "ns", "w")
			if err == nil {
				t.Fatal("approval succeeded over a concurrent change")
			}
			tc.check(t, bare, tip, err)
			gitfixture.Git(t, bare, "fsck", "--strict")

			os.Remove(filepath.Join(bare, "hooks", "pre-receive"))
			fresh, err := OpenStore(ctx, url, "main")
			if err != nil {
				t.Fatal(err)
			}
			n, err := fresh.Approve(ctx, "ns", "w")
			if err != nil || fmt.Sprintf("ns/v%d", n) != tc.next {
				t.Fatalf("next approval = %d, %v; want %s", n, err, tc.next)
			}
			if tag, main := gitfixture.Git(t, bare, "rev-parse", tc.next), gitfixture.Git(t, bare, "rev-parse", "main"); tag != main {
				t.Errorf("%s at %s, main at %s", tc.next, tag, main)
			}
			if refs := gitfixture.Git(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/proposed"); refs != "" {
				t.Errorf("proposal left after the next approval: %s", refs)
			}
		})
	}
}

// takeTag is a concurrent publisher tagging main's tip as ns/v1: the
// approval commit, a child of that tip, would fast-forward the tag.
func takeTag(t *testing.T, bare string) {
	gitfixture.Git(t, bare, "tag", "ns/v1", "main")
}

func tagKept(t *testing.T, bare, tip string, err error) {
	t.Helper()
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "ns/w as ns/v1") {
		t.Errorf("approval error %v: want ErrConflict naming ns/w as ns/v1", err)
	}
	if got := gitfixture.Git(t, bare, "rev-parse", "ns/v1"); got != tip {
		t.Errorf("published tag ns/v1 moved from %s to %s", tip, got)
	}
	if got := gitfixture.Git(t, bare, "rev-parse", "main"); got != tip {
		t.Errorf("main moved to %s without its tag", got)
	}
	gitfixture.Git(t, bare, "rev-parse", "refs/heads/proposed/ns/w")
}

// moveMain is a person pushing to main.
func moveMain(t *testing.T, bare string) {
	wt := gitfixture.WorkTree(t, bare)
	gitfixture.WriteFiles(t, wt, map[string]string{"README.md": "changed\n"})
	gitfixture.CommitAndTag(t, wt, "by hand", "")
}

func nothingPublished(t *testing.T, bare, tip string, err error) {
	t.Helper()
	if !errors.Is(err, ErrConflict) {
		t.Errorf("approval error %v: want ErrConflict", err)
	}
	if tags := gitfixture.Git(t, bare, "tag", "-l"); tags != "" {
		t.Errorf("tags left by a failed approval: %s", tags)
	}
	if got := gitfixture.Git(t, bare, "log", "-1", "--format=%s", "main"); got != "by hand" {
		t.Errorf("main's tip is %q, want the person's commit", got)
	}
	gitfixture.Git(t, bare, "rev-parse", "refs/heads/proposed/ns/w")
}

// refuseDeletes makes the remote refuse deleting the proposal, so a
// remote without atomic pushes takes the tag and branch and stops there.
func refuseDeletes(t *testing.T, bare string) {
	hook := "#!/bin/sh\nwhile read old new ref; do\n  case \"$new $ref\" in 0000000000000000000000000000000000000000\\ refs/heads/proposed/*) exit 1;; esac\ndone\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
}

func publishedWithProposal(t *testing.T, bare, tip string, err error) {
	t.Helper()
	if !strings.Contains(err.Error(), "published as ns/v1, but deleting the proposal failed") {
		t.Errorf("approval error %v: want it to say ns/v1 is published and the proposal left", err)
	}
	if tag, main := gitfixture.Git(t, bare, "rev-parse", "ns/v1"), gitfixture.Git(t, bare, "rev-parse", "main"); tag != main || main == tip {
		t.Errorf("ns/v1 at %s, main at %s (was %s): want both at the approval", tag, main, tip)
	}
	gitfixture.Git(t, bare, "rev-parse", "refs/heads/proposed/ns/w")
}
