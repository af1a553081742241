package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
)

// The attacks of the trust-rules review, each performed through the
// public entry points (signed webhooks into the server, comments, pushes,
// kptbot.yaml) against the emulated GitHub, each shown to fail.

// openPR pushes files on a new branch as who and announces the pull
// request with a signed "opened" delivery.
func (w *ghWorld) openPR(who, branch string, files map[string][]byte, draft bool) (int, string) {
	w.t.Helper()
	ctx := context.Background()
	head, err := w.client().PushFiles(ctx, w.repo, branch, "", "main", files, "change by "+who)
	if err != nil {
		w.t.Fatal(err)
	}
	c, err := w.client().OpenChange(ctx, w.repo, forge.ChangeSpec{Head: branch, Base: "main", Title: "change by " + who, Draft: draft})
	if err != nil {
		w.t.Fatal(err)
	}
	w.gh.SetAuthor(w.repo, c.Number, who)
	w.deliverPR("opened", c.Number, branch, head, who, draft)
	return c.Number, head
}

// deliverPR delivers a pull_request event (opened, synchronize) for the
// change's current state, sent by who.
func (w *ghWorld) deliverPR(action string, n int, branch, head, who string, draft bool) {
	w.t.Helper()
	file := "pull_request/opened.payload.json"
	if action == "synchronize" {
		file = "pull_request/synchronize.payload.json"
	}
	if st := w.deliver(0, "pull_request", w.id(), w.payload(file, map[string]any{
		"number": n, "pull_request.number": n, "pull_request.draft": draft, "pull_request.user.login": w.change(n).Author.Login,
		"pull_request.head.ref": branch, "pull_request.head.sha": head, "pull_request.base.ref": "main",
		"pull_request.head.repo.full_name": w.repo.FullName, "pull_request.base.repo.full_name": w.repo.FullName,
		"sender.login": who, "sender.type": "User",
	})); st != http.StatusAccepted {
		w.t.Fatalf("%s delivery: HTTP %d", action, st)
	}
}

// reviewAs submits a review in state st and returns its delivery.
func (w *ghWorld) reviewAs(number int, who string, st forge.ReviewState, sha string) []byte {
	w.gh.Review(w.repo, number, forge.Review{State: st, Reviewer: forge.User{Login: who}, CommitSHA: sha})
	file := "derived/pull_request_review.submitted.approved.payload.json"
	if st == forge.ReviewChangesRequested {
		file = "derived/pull_request_review.submitted.changes_requested.payload.json"
	}
	return w.payload(file, map[string]any{
		"pull_request.number": number, "review.commit_id": sha, "review.user.login": who, "review.state": string(st), "sender.login": who,
		"pull_request.head.repo.full_name": w.repo.FullName, "pull_request.base.repo.full_name": w.repo.FullName,
	})
}

// comment posts body as who and delivers it.
func (w *ghWorld) comment(n int, who, body string) {
	w.t.Helper()
	if st := w.deliver(0, "issue_comment", w.id(), w.commentPayload(n, who, body)); st != http.StatusAccepted {
		w.t.Fatalf("comment delivery: HTTP %d", st)
	}
}

func (w *ghWorld) mustNotMerge(n int, why string) {
	w.t.Helper()
	if c := w.change(n); c.Merged || w.gh.Merges(w.repo) != 0 || len(w.tags()) != 0 {
		w.t.Fatalf("%s: merged=%v merges=%d tags=%v\ncomments: %q", why, c.Merged, w.gh.Merges(w.repo), w.tags(), w.comments(n))
	}
}

func scaled(n string) []byte {
	return []byte(strings.Replace(configMap, `replicas: "1"`, `replicas: "`+n+`"`, 1))
}

// TestAttackGitHubForgedStateThroughPackageName is item 1: mallory pushes
// a package whose directory name is a state marker approving a commit she
// prepared, then force-pushes that commit. The bot echoed the name in its
// status comment and read the first marker; now the record is the marker
// that ends the bot's comment and echoed names are escaped.
func TestAttackGitHubForgedStateThroughPackageName(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	ctx := context.Background()
	// The commit she will make the head, prepared on a side branch.
	evil, err := w.client().PushFiles(ctx, w.repo, "side", "", "main", map[string][]byte{"pkgs/ns/cm.yaml": scaled("99")}, "the payload")
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf(`<!-- kptbot-state: {"approvals":[{"by":"alice","sha":"%s"}]} -->`, evil)
	n, _ := w.openPR("mallory", "evil", map[string][]byte{"pkgs/" + marker + "/Kptfile": []byte(kptfile), "pkgs/" + marker + "/cm.yaml": []byte(configMap)}, false)
	for _, c := range w.comments(n) {
		if strings.Contains(c, "by\":\"alice") && strings.Index(c, "<!--") != strings.LastIndex(c, "<!--") {
			t.Errorf("the status comment echoes the package name as markup:\n%s", c)
		}
	}
	w.gh.ForcePush(w.repo, "evil", evil)
	w.deliverPR("synchronize", n, "evil", evil, "mallory", false)
	w.mustNotMerge(n, "a state marker in a package name approved mallory's commit")
	// The marker in a PR title, body or comment does no better.
	w.comment(n, "mallory", "**kptbot** status for this change\n\n"+marker)
	w.deliverPR("synchronize", n, "evil", evil, "mallory", false)
	w.mustNotMerge(n, "a state marker in a user's comment approved mallory's commit")
}

// TestAttackGitHubApprovalCarriedOverExtraFiles is item 2: after alice
// approves, dana pushes a head whose packages render the same but which
// adds a workflow and a kptbot.yaml letting authors approve.
func TestAttackGitHubApprovalCarriedOverExtraFiles(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	w.setConfig("apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: site-a\nspec:\n  approvals:\n    minimum: 2\n")
	n, head := w.openPR("dana", "scale", map[string][]byte{"pkgs/ns/cm.yaml": scaled("3")}, false)
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(n, "alice", forge.ReviewApproved, head))
	// Same package content, plus files outside any package.
	next := w.push("dana", "scale", n, head, map[string][]byte{
		".github/workflows/exfiltrate.yml": []byte("on: push\njobs: {}\n"),
		"kptbot.yaml":                      []byte("apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: site-a\nspec:\n  approvals:\n    allowAuthor: true\n"),
	})
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(n, "bob", forge.ReviewApproved, next))
	w.mustNotMerge(n, "alice's approval of the old head carried over to a head that adds a workflow and a kptbot.yaml")
	said := false
	for _, c := range w.comments(n) {
		said = said || (strings.Contains(c, "@alice") && strings.Contains(c, "no longer counts"))
	}
	if !said {
		t.Errorf("the bot did not say alice's approval no longer counts: %q", w.comments(n))
	}
	// Legitimate: alice approves the new head, and it publishes.
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(n, "alice", forge.ReviewApproved, next))
	if !w.change(n).Merged {
		t.Fatalf("not merged after alice and bob approved the new head: %q", w.comments(n))
	}
}

// TestAttackGitHubDeleteRequesterApprovesAlone is item 3: bob asks the bot
// to delete a package and then approves the bot's change himself.
func TestAttackGitHubDeleteRequesterApprovesAlone(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	n, _ := w.openPR("dana", "scale", map[string][]byte{"pkgs/ns/cm.yaml": scaled("3")}, true)
	w.comment(n, "bob", "/kptbot delete pkgs/ns")
	var del forge.Change
	open, err := w.client().ListOpenChanges(context.Background(), w.repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range open {
		if strings.HasPrefix(c.Title, "Delete package pkgs/ns") {
			del = c
		}
	}
	if del.Number == 0 {
		t.Fatalf("no deletion change opened; comments %q", w.comments(n))
	}
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(del.Number, "bob", forge.ReviewApproved, del.HeadSHA))
	w.comment(del.Number, "bob", "/kptbot approve")
	w.mustNotMerge(del.Number, "the deletion bob requested was published on bob's own approval")
	// Someone else's approval publishes it.
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(del.Number, "alice", forge.ReviewApproved, del.HeadSHA))
	if !w.change(del.Number).Merged {
		t.Fatalf("alice's approval did not publish the deletion: %q", w.comments(del.Number))
	}
}

// TestAttackGitHubApproveRacesPush is item 4: alice writes /kptbot approve
// while the head is harmless; dana pushes before the bot handles the
// comment. The comment must not approve the new head, in either delivery
// order; alice can then approve it by SHA.
func TestAttackGitHubApproveRacesPush(t *testing.T) {
	t.Parallel()
	for _, pushFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("push delivered first=%v", pushFirst), func(t *testing.T) {
			t.Parallel()
			w := newGHWorld(t, 1)
			n, head := w.openPR("dana", "scale", map[string][]byte{"pkgs/ns/cm.yaml": scaled("3")}, false)
			approve := w.commentPayload(n, "alice", "/kptbot approve") // written now, handled later
			evil, err := w.client().PushFiles(context.Background(), w.repo, "scale", head, head, map[string][]byte{"pkgs/ns/cm.yaml": scaled("99")}, "sneak")
			if err != nil {
				t.Fatal(err)
			}
			if pushFirst {
				w.deliverPR("synchronize", n, "scale", evil, "dana", false)
			}
			w.deliver(0, "issue_comment", w.id(), approve)
			if !pushFirst {
				w.deliverPR("synchronize", n, "scale", evil, "dana", false)
			}
			w.mustNotMerge(n, "a queued /kptbot approve approved a head pushed after it was written")
			w.comment(n, "alice", "/kptbot approve "+evil[:10])
			if !w.change(n).Merged {
				t.Fatalf("an explicit /kptbot approve SHA did not publish: %q", w.comments(n))
			}
		})
	}
}

// TestAttackGitHubChangesRequestedAfterCommandApproval is item 5: alice
// approves by command, then requests changes; her approval must not count.
func TestAttackGitHubChangesRequestedAfterCommandApproval(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	n, head := w.openPR("dana", "scale", map[string][]byte{"pkgs/ns/cm.yaml": scaled("3")}, true)
	w.comment(n, "alice", "/kptbot approve")
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(n, "alice", forge.ReviewChangesRequested, head))
	w.comment(n, "dana", "/kptbot propose")
	w.mustNotMerge(n, "alice's command approval survived her later changes-requested review")
	// Her later word counts again.
	w.comment(n, "alice", "/kptbot approve")
	if !w.change(n).Merged {
		t.Fatalf("alice's later approval did not publish: %q", w.comments(n))
	}
}

// TestAttackGitHubUserNamedLikeTheApp is item 6: a user account whose
// login is the App's slug posts a forged status comment before the bot
// writes its own, and pushes without being recorded as the pusher.
func TestAttackGitHubUserNamedLikeTheApp(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	w.gh.SetPermission(w.repo, "kptbot", "write")
	ctx := context.Background()
	head, err := w.client().PushFiles(ctx, w.repo, "scale", "", "main", map[string][]byte{"pkgs/ns/cm.yaml": scaled("50")}, "scale")
	if err != nil {
		t.Fatal(err)
	}
	c, err := w.client().OpenChange(ctx, w.repo, forge.ChangeSpec{Head: "scale", Base: "main", Title: "scale"})
	if err != nil {
		t.Fatal(err)
	}
	w.gh.SetAuthor(w.repo, c.Number, "mallory")
	forged := fmt.Sprintf("**kptbot** status for this change\n\n<!-- kptbot-state: {\"approvals\":[{\"by\":\"alice\",\"sha\":%q}]} -->", head)
	w.comment(c.Number, "kptbot", forged)
	w.deliverPR("opened", c.Number, "scale", head, "mallory", false)
	w.mustNotMerge(c.Number, "a user named like the App wrote the bot's state")

	// The same user pushes, then approves their own push.
	next := w.push("kptbot", "scale", c.Number, head, map[string][]byte{"pkgs/ns/cm.yaml": scaled("51")})
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(c.Number, "kptbot", forge.ReviewApproved, next))
	w.mustNotMerge(c.Number, "the user named like the App approved their own push (their push event was skipped as the bot's)")
}

// TestAttackGitHubPusherEventsOutOfOrder: dana pushes, then alice pushes
// on top; alice's synchronize arrives first and dana's late. The pusher
// must be recorded for the commit each pushed, so alice cannot approve the
// head she pushed because dana's late event named dana for it.
func TestAttackGitHubPusherEventsOutOfOrder(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	n, head := w.openPR("dana", "scale", map[string][]byte{"pkgs/ns/cm.yaml": scaled("3")}, false)
	ctx := context.Background()
	danas, err := w.client().PushFiles(ctx, w.repo, "scale", head, head, map[string][]byte{"pkgs/ns/cm.yaml": scaled("4")}, "dana")
	if err != nil {
		t.Fatal(err)
	}
	alices, err := w.client().PushFiles(ctx, w.repo, "scale", danas, danas, map[string][]byte{"pkgs/ns/cm.yaml": scaled("77")}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	w.deliverPR("synchronize", n, "scale", alices, "alice", false)
	w.deliverPR("synchronize", n, "scale", danas, "dana", false)
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(n, "alice", forge.ReviewApproved, alices))
	w.mustNotMerge(n, "alice approved the head she pushed herself")
	w.deliver(0, "pull_request_review", w.id(), w.reviewAs(n, "bob", forge.ReviewApproved, alices))
	if !w.change(n).Merged {
		t.Fatalf("bob's approval did not publish: %q", w.comments(n))
	}
}
