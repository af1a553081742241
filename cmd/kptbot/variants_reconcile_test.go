package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/gitstore"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

const conflictVariant = `apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata: {name: edge-1}
spec: {updatePolicy: publish}
---
apiVersion: kptbot.dev/v1alpha1
kind: PackageVariant
metadata: {name: team-a}
spec:
  upstream: {repo: UPSTREAM, package: basens, revision: REV}
  downstream: {package: team-a}
`

// `variants reconcile` never takes upstream's value silently: a person
// raised the quota's cpu in a published revision, upstream changed it
// too (basens v2 → v3), and the upgrade draft's conflict is in the JSON
// and text output and in the draft's commit message; the draft is not
// published although updatePolicy is publish.
func TestVariantsReconcileReportsConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := strings.TrimSuffix(gitfixture.Blueprints(t), ".git")
	root := t.TempDir()
	bare := filepath.Join(root, "edge-1.git")
	gitfixture.Git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	setCfg := func(rev string) {
		wt := gitfixture.WorkTree(t, bare)
		gitfixture.WriteFiles(t, wt, map[string]string{"kptbot.yaml": strings.NewReplacer("UPSTREAM", up, "REV", rev).Replace(conflictVariant)})
		gitfixture.CommitAndTag(t, wt, "pin "+rev, "")
	}
	setCfg("v2")
	if _, stderr, code := kptbot(t, "variants", "reconcile", "--repo", bare); code != 0 {
		t.Fatalf("first reconcile: %s", stderr)
	}
	s, err := gitstore.OpenStore(ctx, bare, "main")
	if err != nil {
		t.Fatal(err)
	}
	publish := func(ws string) {
		t.Helper()
		if err := s.Propose(ctx, "team-a", ws); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Approve(ctx, "team-a", ws); err != nil {
			t.Fatal(err)
		}
	}
	if tags := gitfixture.Git(t, bare, "tag", "--list"); tags != "team-a/v1" {
		t.Fatalf("updatePolicy publish: tags %q, want the clone published as team-a/v1", tags)
	}
	// A person's local edit, published as team-a/v2.
	files, err := s.Repo().Tree(ctx, gitfixture.Git(t, bare, "rev-parse", "team-a/v1^{commit}"), "/team-a")
	if err != nil {
		t.Fatal(err)
	}
	files["resourcequota.yaml"] = []byte(strings.Replace(string(files["resourcequota.yaml"]), `cpu: "40"`, `cpu: "45"`, 1))
	if _, err := s.CreateDraft(ctx, "team-a", "more-cpu", files, []byte(`{"type":"edit"}`)); err != nil {
		t.Fatal(err)
	}
	publish("more-cpu")

	setCfg("v3")
	out, stderr, code := kptbot(t, "variants", "reconcile", "--repo", bare, "--dry-run", "-o", "json")
	if code != 0 {
		t.Fatalf("dry run: %s", stderr)
	}
	var plan []struct {
		Kind      string `json:"kind"`
		Lifecycle string `json:"lifecycle"`
		Conflicts []struct {
			File, Field, Local, Upstream string
		} `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	// conflicts hold the upgrade back as a draft, publish or not
	if len(plan) != 1 || plan[0].Kind != "create-draft" || plan[0].Lifecycle != "Draft" || len(plan[0].Conflicts) != 1 {
		t.Fatalf("JSON plan = %s", out)
	}
	if c := plan[0].Conflicts[0]; c.File != "resourcequota.yaml" || c.Field != "spec.hard.cpu" || c.Local != "45" || c.Upstream != "50" {
		t.Errorf("conflict = %+v", c)
	}
	out, stderr, code = kptbot(t, "variants", "reconcile", "--repo", bare)
	if code != 0 {
		t.Fatalf("reconcile: %s", stderr)
	}
	if !strings.Contains(out, "Conflicts: 1 field(s) changed both locally and upstream; upstream's value was taken") || !strings.Contains(out, `resourcequota.yaml: ResourceQuota example/default: spec.hard.cpu: local "45", upstream "50"`) {
		t.Errorf("text output lacks the conflict:\n%s", out)
	}
	msg := gitfixture.Git(t, bare, "log", "-1", "--format=%B", "drafts/team-a/team-a-v3")
	if !strings.HasPrefix(msg, "Upgrading revision\n\nConflicts: 1 field(s)") || !strings.Contains(msg, `spec.hard.cpu: local "45", upstream "50"`) || !strings.Contains(msg, "\nkpt:") {
		t.Errorf("upgrade draft's commit message:\n%s", msg)
	}
}
