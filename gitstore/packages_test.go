package gitstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/internal/gitfixture"
	"github.com/kptbot/kptbot/porch"
)

// TestPackageOperations runs the rpkg operations on a real repository:
// a clone from Porch's test blueprints, published; an upgrade of the
// published revision into a new draft in one step; a copy of the latest
// revision edited and upgraded in place, with the conflict reported and
// Porch's upgrade task recorded; and the revisions read back.
func TestPackageOperations(t *testing.T) {
	t.Parallel()
	s, bare := newStore(t)
	ctx := context.Background()
	up := "file://" + gitfixture.Blueprints(t)
	src := fetch.NewClient()

	if _, _, err := s.CloneDraft(ctx, src, "team-a", "w", engine.GetOptions{Repo: up, Dir: "/basens", Version: "v2"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Propose(ctx, "team-a", "w"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Approve(ctx, "team-a", "w"); err != nil || n != 1 {
		t.Fatalf("Approve = %d, %v", n, err)
	}

	// No draft "next": it starts from the latest published revision.
	u, err := s.Upgrade(ctx, src, "team-a", "next", UpgradeOptions{Revision: Latest, Version: "v3"})
	if err != nil {
		t.Fatal(err)
	}
	if u.From != "team-a/v1" || u.To != "basens/v3" || len(u.Conflicts) != 0 {
		t.Errorf("Upgrade from a published revision = %+v", u)
	}
	draft, err := s.Draft(ctx, "team-a", "next")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(draft["resourcequota.yaml"]), `cpu: "50"`) {
		t.Errorf("the upgraded draft does not hold upstream v3:\n%s", draft["resourcequota.yaml"])
	}

	// A copy of the latest revision, edited where v3 changes, upgraded in place.
	if n, err := s.CopyDraft(ctx, "team-a", "edit", Latest); err != nil || n != 1 {
		t.Fatalf("CopyDraft = %d, %v", n, err)
	}
	n, files, err := s.Published(ctx, "team-a", 1)
	if err != nil || n != 1 {
		t.Fatalf("Published(1) = %d, %v", n, err)
	}
	files["resourcequota.yaml"] = []byte(strings.Replace(string(files["resourcequota.yaml"]), `cpu: "40"`, `cpu: "45"`, 1))
	if _, err := s.PushDraft(ctx, "team-a", "edit", files); err != nil {
		t.Fatal(err)
	}
	u, err = s.Upgrade(ctx, src, "team-a", "edit", UpgradeOptions{Revision: Latest, Version: "v3"})
	if err != nil {
		t.Fatal(err)
	}
	if u.From != "" || len(u.Conflicts) != 1 || u.Conflicts[0].Local != `"45"` && u.Conflicts[0].Local != "45" {
		t.Errorf("Upgrade in place = %+v, want one conflict on the local 45", u)
	}
	msg := gitfixture.Git(t, bare, "log", "-1", "--format=%B", "drafts/team-a/edit")
	tr, found, err := porch.ParseTrailer(msg)
	if err != nil || !found {
		t.Fatalf("the upgrade commit has no trailer (%v):\n%s", err, msg)
	}
	task, err := porch.ParseTask(tr.Task)
	if err != nil || task.Type != porch.TaskTypeUpgrade || task.Upgrade.LocalPackageRevisionRef.Name != "drafts/team-a/edit" ||
		!strings.HasSuffix(task.Upgrade.NewUpstream.Name, "/basens@v3") {
		t.Errorf("the upgrade commit's task = %+v, %v", task, err)
	}

	// What failed says so, by the package and workspace.
	if _, err := s.Upgrade(ctx, src, "none", "x", UpgradeOptions{Revision: Latest}); !errors.Is(err, ErrNotFound) {
		t.Errorf("upgrading a package with no revision: %v, want ErrNotFound", err)
	}
	if _, err := s.Upgrade(ctx, src, "team-a", "edit", UpgradeOptions{Revision: Latest, Version: "v99"}); err == nil ||
		!strings.HasPrefix(err.Error(), "upgrading team-a/edit: ") || strings.Contains(err.Error(), "kptbot-") {
		t.Errorf("a failed upgrade: %v, want it named by package and workspace, without temporary paths", err)
	}
	if _, _, err := s.Published(ctx, "team-a", 7); !errors.Is(err, ErrNotFound) {
		t.Errorf("Published(7): %v, want ErrNotFound", err)
	}

	rows, warnings, err := Revisions(ctx, bare, "main")
	if err != nil || len(warnings) != 0 {
		t.Fatalf("Revisions: %v, %v", err, warnings)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Name+"="+string(r.Lifecycle))
	}
	if got, want := strings.Join(names, " "), "deploy.team-a.w=Published deploy.team-a.edit=Draft deploy.team-a.next=Draft"; got != want {
		t.Errorf("Revisions = %s, want %s", got, want)
	}
}
