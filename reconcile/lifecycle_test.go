package reconcile

import (
	"context"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/gitstore"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

// setConfig commits kptbot.yaml (UPSTREAM replaced by up) to bare's main.
func setConfig(t *testing.T, bare, up, cfg, msg string) {
	t.Helper()
	wt := gitfixture.WorkTree(t, bare)
	gitfixture.WriteFiles(t, wt, map[string]string{"kptbot.yaml": strings.ReplaceAll(cfg, "UPSTREAM", up)})
	gitfixture.CommitAndTag(t, wt, msg, "")
}

func branches(t *testing.T, bare, prefix string) string {
	t.Helper()
	return gitfixture.Git(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/"+prefix)
}

// As Porch's controller (deleteOrOrphan on every revision the removed
// PackageVariant owned): its draft and its proposal are deleted, not
// only its published package handled; with deletionPolicy orphan they
// stay.
func TestReconcileRemovedVariantDeletesDraftsAndProposals(t *testing.T) {
	t.Parallel()
	up := strings.TrimSuffix(gitfixture.Blueprints(t), ".git")
	second := strings.NewReplacer("name: team-a}", "name: team-b}", "package: team-a}", "package: team-b}", "team: a", "team: b", "namespace: team-a", "namespace: team-b").Replace(strings.SplitN(kptbotYAML, "---", 2)[1])
	for _, policy := range []string{"delete", "orphan"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			withPolicy := func(cfg string) string {
				return strings.Replace(cfg, "  labels:", "  deletionPolicy: "+policy+"\n  labels:", 1)
			}
			cfg := withPolicy(kptbotYAML) + "---" + withPolicy(second)
			bare := downstreamRepo(t, up, cfg)
			plan := run(t, bare, false)
			if kinds(plan) != "create-draft,create-draft" {
				t.Fatalf("plan = %+v", plan)
			}
			wsA, wsB := plan[0].Workspace, plan[1].Workspace
			// team-b's draft is proposed; team-a's stays a draft.
			s, err := gitstore.OpenStore(context.Background(), bare, "main")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Propose(context.Background(), "team-b", wsB); err != nil {
				t.Fatal(err)
			}
			// Both variants leave kptbot.yaml.
			setConfig(t, bare, up, strings.SplitN(cfg, "---", 2)[0], "drop the variants")
			plan = run(t, bare, false)
			want := map[string]string{"delete": "delete-draft,delete-draft", "orphan": "none,none"}[policy]
			if kinds(plan) != want {
				t.Fatalf("plan = %+v, want %s", plan, want)
			}
			left := branches(t, bare, "drafts") + branches(t, bare, "proposed")
			if policy == "delete" && left != "" {
				t.Errorf("drafts and proposals left after the variants were removed: %q", left)
			}
			if policy == "orphan" && left != "refs/heads/drafts/team-a/"+wsA+"refs/heads/proposed/team-b/"+wsB {
				t.Errorf("orphaned drafts and proposals: %q", left)
			}
			if !strings.Contains(plan[0].Why, "variant team-a no longer exists; deletionPolicy "+policy) {
				t.Errorf("why = %q", plan[0].Why)
			}
		})
	}
}

// A variant whose downstream package changes: its draft of the old
// package is deleted (Porch: an owned revision that no longer matches the
// downstream is deleted or orphaned) and a draft of the new one opened.
func TestReconcileMovedVariantDeletesOldDraft(t *testing.T) {
	t.Parallel()
	up := strings.TrimSuffix(gitfixture.Blueprints(t), ".git")
	bare := downstreamRepo(t, up, kptbotYAML)
	first := run(t, bare, false)
	setConfig(t, bare, up, strings.Replace(kptbotYAML, "downstream: {package: team-a}", "downstream: {package: team-a2}", 1), "move the variant")
	plan := run(t, bare, false)
	if kinds(plan) != "create-draft,delete-draft" || plan[0].Package != "team-a2" || plan[1].Package != "team-a" || plan[1].Workspace != first[0].Workspace {
		t.Fatalf("plan = %+v", plan)
	}
	if got := branches(t, bare, "drafts"); got != "refs/heads/drafts/team-a2/"+plan[0].Workspace {
		t.Errorf("drafts = %q, want only the new package's", got)
	}
	if !strings.Contains(plan[1].Why, "variant team-a now targets team-a2") {
		t.Errorf("why = %q", plan[1].Why)
	}
}

// adoptionPolicy adoptExisting: a draft of the target package that no
// variant owns (a person's) is adopted and updated, not joined by a
// second draft; adoptNone leaves it alone and opens the variant's own.
func TestReconcileAdoptsUnownedDraft(t *testing.T) {
	t.Parallel()
	up := strings.TrimSuffix(gitfixture.Blueprints(t), ".git")
	for _, policy := range []string{"adoptExisting", "adoptNone"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			cfg := strings.Replace(kptbotYAML, "  labels:", "  adoptionPolicy: "+policy+"\n  labels:", 1)
			bare := downstreamRepo(t, up, cfg)
			s, err := gitstore.OpenStore(context.Background(), bare, "main")
			if err != nil {
				t.Fatal(err)
			}
			kf := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: team-a\n"
			if _, err := s.CreateDraft(context.Background(), "team-a", "by-hand", map[string][]byte{"Kptfile": []byte(kf)}, []byte(`{"type":"init"}`)); err != nil {
				t.Fatal(err)
			}
			plan := run(t, bare, false)
			drafts := branches(t, bare, "drafts")
			if policy == "adoptNone" {
				if kinds(plan) != "create-draft" || !strings.Contains(drafts, "by-hand") || strings.Count(drafts, "\n") != 1 {
					t.Fatalf("plan = %+v, drafts %q: want the variant's own draft beside the person's", plan, drafts)
				}
				return
			}
			if kinds(plan) != "update-draft" || plan[0].Workspace != "by-hand" || drafts != "refs/heads/drafts/team-a/by-hand" {
				t.Fatalf("plan = %+v, drafts %q: want the unowned draft adopted", plan, drafts)
			}
			got := gitfixture.Git(t, bare, "show", "drafts/team-a/by-hand:team-a/Kptfile")
			if !strings.Contains(got, "kptbot.dev/package-variant: 'team-a'") || !strings.Contains(got, "team: a") {
				t.Errorf("adopted draft's Kptfile:\n%s", got)
			}
			if got := kinds(run(t, bare, false)); got != "none" {
				t.Errorf("second run = %s, want none", got)
			}
		})
	}
}

// upstream.workspaceName picks the published revision made in that
// workspace (Porch's approve records it in the commit's kpt trailer), not
// the latest one.
func TestReconcileUpstreamWorkspaceName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	upBare := gitfixture.Blueprints(t)
	us, err := gitstore.OpenStore(ctx, upBare, "main")
	if err != nil {
		t.Fatal(err)
	}
	v4, err := us.Repo().Tree(ctx, gitfixture.Git(t, upBare, "rev-parse", "basens/v4^{commit}"), "/basens")
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{"blue", "green"} {
		files := map[string][]byte{}
		for p, b := range v4 {
			files[p] = b
		}
		files["ws.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ws\ndata:\n  ws: " + ws + "\n")
		if _, err := us.CreateDraft(ctx, "basens", ws, files, []byte(`{"type":"edit"}`)); err != nil {
			t.Fatal(err)
		}
		if err := us.Propose(ctx, "basens", ws); err != nil {
			t.Fatal(err)
		}
		if _, err := us.Approve(ctx, "basens", ws); err != nil { // blue: v5, green: v6
			t.Fatal(err)
		}
	}
	up := strings.TrimSuffix(upBare, ".git")
	bare := downstreamRepo(t, up, strings.Replace(kptbotYAML, "package: basens}", "package: basens, workspaceName: blue}", 1))
	plan := run(t, bare, false)
	if kinds(plan) != "create-draft" || plan[0].Workspace != "team-a-v5" {
		t.Fatalf("plan = %+v, want a clone of basens/v5 (workspace blue)", plan)
	}
	if l := lockOf(t, bare, "drafts/team-a/team-a-v5"); l.Ref != "basens/v5" {
		t.Errorf("lock = %+v, want basens/v5", l)
	}
	if got := gitfixture.Git(t, bare, "show", "drafts/team-a/team-a-v5:team-a/ws.yaml"); !strings.Contains(got, "ws: blue") {
		t.Errorf("ws.yaml:\n%s", got)
	}
}

// updatePolicy on plain git, as the bot does with its change: propose
// leaves the revision on a proposed/ branch (and a newer upstream updates
// that proposal), publish approves it as Porch does (committed onto the
// registered branch, tagged <pkg>/v<N>).
func TestReconcileHonoursUpdatePolicy(t *testing.T) {
	t.Parallel()
	up := strings.TrimSuffix(gitfixture.Blueprints(t), ".git")
	pinned := func(policy, rev string) string {
		return strings.NewReplacer("updatePolicy: draft", "updatePolicy: "+policy, "package: basens}", "package: basens, revision: "+rev+"}").Replace(kptbotYAML)
	}
	t.Run("propose", func(t *testing.T) {
		t.Parallel()
		bare := downstreamRepo(t, up, pinned("propose", "v2"))
		plan := run(t, bare, false)
		if kinds(plan) != "create-draft" || plan[0].Lifecycle != "Proposed" {
			t.Fatalf("plan = %+v", plan)
		}
		ws := plan[0].Workspace
		if got := branches(t, bare, "drafts") + branches(t, bare, "proposed"); got != "refs/heads/proposed/team-a/"+ws {
			t.Fatalf("branches = %q, want only the proposal", got)
		}
		if got := kinds(run(t, bare, false)); got != "none" {
			t.Errorf("second run = %s, want none", got)
		}
		setConfig(t, bare, up, pinned("propose", "v3"), "follow v3")
		plan = run(t, bare, false)
		if kinds(plan) != "update-draft" || plan[0].Workspace != ws || plan[0].Lifecycle != "Proposed" {
			t.Fatalf("plan after v3 = %+v, want the proposal updated", plan)
		}
		if got := branches(t, bare, "drafts") + branches(t, bare, "proposed"); got != "refs/heads/proposed/team-a/"+ws {
			t.Fatalf("branches after v3 = %q", got)
		}
		if rq := gitfixture.Git(t, bare, "show", "proposed/team-a/"+ws+":team-a/resourcequota.yaml"); !strings.Contains(rq, `cpu: "50"`) {
			t.Errorf("proposal not moved to v3:\n%s", rq)
		}
	})
	t.Run("publish", func(t *testing.T) {
		t.Parallel()
		bare := downstreamRepo(t, up, pinned("publish", "v2"))
		plan := run(t, bare, false)
		if kinds(plan) != "create-draft" || plan[0].Lifecycle != "Published" || plan[0].Published != "team-a/v1" {
			t.Fatalf("plan = %+v", plan)
		}
		if got := branches(t, bare, "drafts") + branches(t, bare, "proposed"); got != "" {
			t.Errorf("branches left after publishing: %q", got)
		}
		tagged := gitfixture.Git(t, bare, "rev-parse", "team-a/v1^{commit}")
		if main := gitfixture.Git(t, bare, "rev-parse", "main"); main != tagged {
			t.Errorf("main %s, tag team-a/v1 %s: want the approval on the registered branch", main, tagged)
		}
		if msg := gitfixture.Git(t, bare, "log", "-1", "--format=%B", "main"); !strings.Contains(msg, `"revision":"v1"`) {
			t.Errorf("approval commit:\n%s", msg)
		}
		if got := kinds(run(t, bare, false)); got != "none" {
			t.Errorf("second run = %s, want none", got)
		}
		setConfig(t, bare, up, pinned("publish", "v3"), "follow v3")
		plan = run(t, bare, false)
		if kinds(plan) != "create-draft" || plan[0].Published != "team-a/v2" {
			t.Fatalf("plan after v3 = %+v, want the upgrade published as team-a/v2", plan)
		}
		if rq := gitfixture.Git(t, bare, "show", "team-a/v2:team-a/resourcequota.yaml"); !strings.Contains(rq, `cpu: "50"`) {
			t.Errorf("team-a/v2 not at v3:\n%s", rq)
		}
	})
}

// The CEL variable upstream of a PackageVariantSet exposes the upstream
// package's labels and annotations (basens v4's Kptfile has test-label
// and test-annotation), as Porch's upstream package revision does.
func TestReconcileSetSeesUpstreamLabelsAndAnnotations(t *testing.T) {
	t.Parallel()
	up := strings.TrimSuffix(gitfixture.Blueprints(t), ".git")
	cfg := `apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata: {name: edge-7}
spec: {updatePolicy: draft}
---
apiVersion: kptbot.dev/v1alpha1
kind: PackageVariantSet
metadata: {name: edge-ns}
spec:
  upstream: {repo: UPSTREAM, package: basens, revision: v4}
  targets:
    - repositories: [{name: edge-7}]
      template:
        labelExprs: [{key: from-upstream, valueExpr: "upstream.labels['test-label']"}]
        annotationExprs: [{key: upstream-annotated, valueExpr: "upstream.annotations['test-annotation'] + '-' + upstream.name"}]
`
	bare := downstreamRepo(t, up, cfg)
	plan := run(t, bare, false)
	if kinds(plan) != "create-draft" {
		t.Fatalf("plan = %+v", plan)
	}
	kf := gitfixture.Git(t, bare, "show", "drafts/basens/"+plan[0].Workspace+":basens/Kptfile")
	for _, want := range []string{"from-upstream: test-value", "upstream-annotated: true-basens"} {
		if !strings.Contains(kf, want) {
			t.Errorf("Kptfile lacks %q:\n%s", want, kf)
		}
	}
}
