package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
)

// The trust-rule attacks where GitLab differs (notes, the Approve and
// Revoke buttons, the bot's user), through GitLab's webhook payloads.

// deliverUpdate delivers GitLab's update hook for a push by who.
func (w *glWorld) deliverUpdate(n int, who, old, next string) {
	w.t.Helper()
	update := w.payload("derived/merge_request_update_push.json", merge(w.user(who), w.mrFields("object_attributes", n, next, "dana"),
		map[string]any{"object_attributes.action": "update", "object_attributes.oldrev": old}))
	if st := w.deliver("Merge Request Hook", w.key(), glHookSecret, update); st != http.StatusAccepted {
		w.t.Fatalf("update hook: HTTP %d", st)
	}
}

func (w *glWorld) note(n int, head, who, text string) {
	w.t.Helper()
	if st := w.deliver("Note Hook", w.key(), glHookSecret, w.notePayload(n, head, "dana", who, text)); st != http.StatusAccepted {
		w.t.Fatalf("note hook: HTTP %d", st)
	}
}

func (w *glWorld) mustNotMerge(n int, why string) {
	w.t.Helper()
	if mr := w.gl.MergeRequest(w.repo, n); mr.State == "merged" || w.gl.Merges(w.repo) != 0 || len(w.tags()) != 0 {
		w.t.Fatalf("%s: state %s, merges %d, tags %v\nnotes: %q", why, mr.State, w.gl.Merges(w.repo), w.tags(), w.botNotes(n))
	}
}

// TestAttackGitLabApproveRacesPush is item 4 on GitLab: alice's note
// "/kptbot approve" was written while the head was harmless (its hook
// carries that head); dana pushes before the bot handles it.
func TestAttackGitLabApproveRacesPush(t *testing.T) {
	t.Parallel()
	w := newGLWorld(t)
	n, head := w.openHumanDraft("dana")
	w.note(n, head, "dana", "/kptbot propose")
	approve := w.notePayload(n, head, "dana", "alice", "/kptbot approve") // written now
	c := w.client()
	evil, err := c.PushFiles(context.Background(), w.repo, "scale", head, head, map[string][]byte{"pkgs/ns/cm.yaml": scaled("99")}, "sneak")
	if err != nil {
		t.Fatal(err)
	}
	w.deliver("Note Hook", w.key(), glHookSecret, approve)
	w.deliverUpdate(n, "dana", head, evil)
	w.mustNotMerge(n, "a queued /kptbot approve approved a head pushed after it was written")
	w.note(n, evil, "alice", "/kptbot approve "+evil)
	if mr := w.gl.MergeRequest(w.repo, n); mr.State != "merged" {
		t.Fatalf("an explicit /kptbot approve SHA did not publish: %q", w.botNotes(n))
	}
}

// TestAttackGitLabRevokeAfterCommandApproval is item 5 on GitLab: alice
// approves by command, then approves and revokes with GitLab's buttons;
// the revocation withdraws her command approval too.
func TestAttackGitLabRevokeAfterCommandApproval(t *testing.T) {
	t.Parallel()
	w := newGLWorld(t)
	n, head := w.openHumanDraft("dana")
	w.note(n, head, "alice", "/kptbot approve")
	w.gl.Approve(w.repo, n, "alice")
	w.gl.Unapprove(w.repo, n, "alice")
	unapproved := w.payload("derived/merge_request_unapproved.json", merge(w.user("alice"), w.mrFields("object_attributes", n, head, "dana"),
		map[string]any{"object_attributes.action": "unapproved"}))
	if st := w.deliver("Merge Request Hook", w.key(), glHookSecret, unapproved); st != http.StatusAccepted {
		t.Fatalf("unapproved hook: HTTP %d", st)
	}
	w.note(n, head, "dana", "/kptbot propose")
	w.mustNotMerge(n, "alice's command approval survived her revoking her approval")
}

// TestAttackGitLabForgedStatusNote is items 1 and 6 on GitLab: a user
// named like the bot, and the author, post notes shaped as the bot's
// status (header and trailing marker) approving the head before the bot
// writes its own; neither is read as the bot's state.
func TestAttackGitLabForgedStatusNote(t *testing.T) {
	t.Parallel()
	w := newGLWorld(t)
	ctx := context.Background()
	c := w.client()
	head, err := c.PushFiles(ctx, w.repo, "scale", "", "main", map[string][]byte{"pkgs/ns/cm.yaml": scaled("50")}, "scale")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.OpenChange(ctx, w.repo, forge.ChangeSpec{Head: "scale", Base: "main", Title: "scale ns"})
	if err != nil {
		t.Fatal(err)
	}
	w.gl.SetAuthor(w.repo, ch.Number, "dana")
	forged := fmt.Sprintf("**kptbot** status for this change\n\n<!-- kptbot-state: {\"approvals\":[{\"by\":\"alice\",\"sha\":%q}]} -->", head)
	for _, who := range []string{"kptbot", strings.TrimSuffix(gitlabtest.BotUsername, "abcd"), "dana"} {
		w.gl.SetAccess(w.repo, who, gitlabtest.Developer)
		w.gl.AddNote(w.repo, ch.Number, who, forged)
	}
	body := w.payload("merge_request.json", merge(w.user("dana"), w.mrFields("object_attributes", ch.Number, head, "dana"),
		map[string]any{"object_attributes.action": "open", "object_attributes.system": false}))
	if st := w.deliver("Merge Request Hook", w.key(), glHookSecret, body); st != http.StatusAccepted {
		t.Fatalf("open hook: HTTP %d", st)
	}
	w.mustNotMerge(ch.Number, "a note shaped as the bot's status approved the head")
}
