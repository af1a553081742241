package fanout

import (
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/porch"
)

// headTrailer reads the kpt trailer of a change's head commit.
func headTrailer(t *testing.T, fl *fleet, r forge.Repo, head string) (porch.Trailer, porch.Task) {
	t.Helper()
	commits, err := fl.fake.Log(fl.ctx, r, "", head)
	if err != nil || len(commits) == 0 {
		t.Fatalf("log of %s: %v", head, err)
	}
	tr, found, err := porch.ParseTrailer(commits[0].Message)
	if err != nil || !found {
		t.Fatalf("head commit has no kpt trailer (%v):\n%s", err, commits[0].Message)
	}
	task, ok, err := tr.ParsedTask()
	if err != nil || !ok {
		t.Fatalf("trailer without a task (%v):\n%s", err, commits[0].Message)
	}
	return tr, task
}

// TestVariantCommitsRecordPorchTasks: a variant's update branch records
// what Porch would: the clone task for the first change, the upgrade task
// (old upstream, new upstream, local revision) for a new upstream revision.
func TestVariantCommitsRecordPorchTasks(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, 1)
	r := downstream(1)
	fl.tagEvent(1)
	c := fl.openUpdates(r)[0]
	tr, clone := headTrailer(t, fl, r, c.HeadSHA)
	if tr.Package != "team-ns" || tr.WorkspaceName != porch.UpdateWorkspace || clone.Type != porch.TaskTypeClone ||
		clone.Clone == nil || clone.Clone.Upstream.Git == nil || clone.Clone.Upstream.Git.Directory != "/basens" || clone.Clone.Upstream.Git.Ref != "basens/v1" {
		t.Fatalf("clone change's trailer: package %q, workspace %q, task %s", tr.Package, tr.WorkspaceName, clone.JSON())
	}
	fl.fake.Review(r, c.Number, forge.Review{State: forge.ReviewApproved, Reviewer: forge.User{Login: "alice"}, CommitSHA: c.HeadSHA})
	if _, err := fl.bot.Reconcile(fl.ctx, r); err != nil {
		t.Fatal(err)
	}
	fl.publishUpstream(2, map[string][]byte{"basens/ns.yaml": []byte(basensNS("v2"))})
	fl.tagEvent(2)
	cs := fl.openUpdates(r)
	if len(cs) != 1 {
		t.Fatalf("update changes = %+v", cs)
	}
	_, upgrade := headTrailer(t, fl, r, cs[0].HeadSHA)
	want := porch.UpgradeTask("acme/blueprints/basens@v1", "acme/blueprints/basens@v2", "team-ns/v1", porch.ResourceMerge)
	if string(upgrade.JSON()) != string(want.JSON()) {
		t.Errorf("update change's task = %s\nwant %s", upgrade.JSON(), want.JSON())
	}
}

// TestDeletionProposalRecordsPorchTrailer: the change deleting a package
// names the revision it deletes the way the plain-git store does (v<N>)
// and records the delete task.
func TestDeletionProposalRecordsPorchTrailer(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, 1)
	r := downstream(1)
	fl.tagEvent(1)
	c := fl.openUpdates(r)[0]
	fl.fake.Review(r, c.Number, forge.Review{State: forge.ReviewApproved, Reviewer: forge.User{Login: "alice"}, CommitSHA: c.HeadSHA})
	if _, err := fl.bot.Reconcile(fl.ctx, r); err != nil {
		t.Fatal(err)
	}
	main, _ := fl.fake.ReadTree(fl.ctx, r, "main", "")
	if _, err := fl.fake.PushFiles(fl.ctx, r, "main", main.Commit, main.Commit, map[string][]byte{"kptbot.yaml": []byte("apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: site-1\n")}, "drop the variant"); err != nil {
		t.Fatal(err)
	}
	if _, err := fl.bot.Handle(fl.ctx, forge.Event{Forge: forge.GitHub, Kind: forge.EventBranchPushed, Repo: r, Ref: "refs/heads/main", Sender: forge.User{Login: "alice"}}); err != nil {
		t.Fatal(err)
	}
	cs, _ := fl.fake.ListOpenChanges(fl.ctx, r)
	if len(cs) != 1 || cs[0].HeadRef != porch.DeletionProposedBranch("team-ns", 1) {
		t.Fatalf("open changes = %+v, want the deletion proposal", cs)
	}
	tr, task := headTrailer(t, fl, r, cs[0].HeadSHA)
	if tr.Package != "team-ns" || tr.Revision != "v1" || task.Type != porch.TaskTypeDelete {
		t.Errorf("deletion trailer: package %q, revision %q, task %s", tr.Package, tr.Revision, task.JSON())
	}
}
