package reconcile

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kptbot/kptbot/gitstore"
	"github.com/kptbot/kptbot/internal/gitfixture"
	"github.com/kptbot/kptbot/porch"
)

const kptbotYAML = `apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata: {name: edge-1}
spec:
  deployment: true
  injectionSources: [sites/]
  # drafts only: these tests drive the lifecycle by hand (the updatePolicy
  # tests propose and publish)
  updatePolicy: draft
---
apiVersion: kptbot.dev/v1alpha1
kind: PackageVariant
metadata: {name: team-a}
spec:
  upstream: {repo: UPSTREAM, package: basens}
  downstream: {package: team-a}
  labels: {team: a}
  packageContext: {data: {region: eu-west-1}}
  pipeline:
    mutators:
      - name: ns
        image: set-namespace:v0.4
        configMap: {namespace: team-a}
`

// downstreamRepo makes a bare downstream repository whose main branch
// holds kptbotYAML (pointing at upstream).
func downstreamRepo(t testing.TB, upstream, cfg string) string {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "edge-1.git")
	gitfixture.Git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	wt := gitfixture.WorkTree(t, bare)
	gitfixture.WriteFiles(t, wt, map[string]string{
		"kptbot.yaml": strings.ReplaceAll(cfg, "UPSTREAM", upstream),
	})
	gitfixture.CommitAndTag(t, wt, "config", "")
	return bare
}

func run(t testing.TB, bare string, dry bool) []Action {
	t.Helper()
	s, err := gitstore.OpenStore(context.Background(), bare, "main")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Run(context.Background(), s, "main", Options{DryRun: dry})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func kinds(plan []Action) string {
	var k []string
	for _, a := range plan {
		k = append(k, a.Kind)
	}
	return strings.Join(k, ",")
}

func TestReconcileLifecycle(t *testing.T) {
	t.Parallel()
	up := gitfixture.Blueprints(t)
	// Follow basens at v2 first: pin it, then switch to latest.
	bare := downstreamRepo(t, strings.TrimSuffix(up, ".git"), strings.Replace(kptbotYAML, "package: basens}", "package: basens, revision: v2}", 1))
	ctx := context.Background()

	if got := kinds(run(t, bare, true)); got != "create-draft" {
		t.Fatalf("dry run plan = %s, want create-draft", got)
	}
	if refs := gitfixture.Git(t, bare, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/main" {
		t.Fatalf("dry run wrote refs:\n%s", refs)
	}
	plan := run(t, bare, false)
	if kinds(plan) != "create-draft" || plan[0].Workspace != "team-a-v2" {
		t.Fatalf("plan = %+v", plan)
	}
	if got := kinds(run(t, bare, false)); got != "none" {
		t.Fatalf("second run = %s, want none (idempotent)", got)
	}
	draft := "drafts/team-a/team-a-v2"
	clone := draftTask(t, bare, draft, "Creating new revision by cloning")
	if want := porch.CloneGitTask(strings.TrimSuffix(up, ".git"), "/basens", "basens/v2"); string(clone.JSON()) != string(want.JSON()) {
		t.Errorf("clone draft's task = %s\nwant %s", clone.JSON(), want.JSON())
	}
	kf := gitfixture.Git(t, bare, "show", draft+":team-a/Kptfile")
	for _, want := range []string{"team: a", "kptbot.dev/package-variant: 'team-a'", "name: PackageVariant.team-a.ns.0"} {
		if !strings.Contains(kf, want) {
			t.Errorf("draft Kptfile lacks %q:\n%s", want, kf)
		}
	}
	if ns := gitfixture.Git(t, bare, "show", draft+":team-a/resourcequota.yaml"); !strings.Contains(ns, "namespace: team-a") {
		t.Errorf("draft not rendered:\n%s", ns)
	}
	if pc := gitfixture.Git(t, bare, "show", draft+":team-a/package-context.yaml"); !strings.Contains(pc, "region: eu-west-1") {
		t.Errorf("package context:\n%s", pc)
	}

	// Publish it, with a local edit made by a person on the way.
	s, _ := gitstore.OpenStore(ctx, bare, "main")
	if err := s.Propose(ctx, "team-a", "team-a-v2"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Approve(ctx, "team-a", "team-a-v2"); err != nil {
		t.Fatal(err)
	}
	if got := kinds(run(t, bare, false)); got != "none" {
		t.Fatalf("after approval = %s, want none", got)
	}

	// Follow latest: upstream has v4 → an update draft keeps the variant.
	wt := gitfixture.WorkTree(t, bare)
	gitfixture.WriteFiles(t, wt, map[string]string{"kptbot.yaml": strings.ReplaceAll(kptbotYAML, "UPSTREAM", strings.TrimSuffix(up, ".git"))})
	gitfixture.CommitAndTag(t, wt, "follow latest", "")
	plan = run(t, bare, false)
	if kinds(plan) != "create-draft" || plan[0].Workspace != "team-a-v4" || !strings.Contains(plan[0].Why, "upgrade to") {
		t.Fatalf("upgrade plan = %+v", plan)
	}
	upgrade := draftTask(t, bare, "drafts/team-a/team-a-v4", "Upgrading revision")
	want := porch.UpgradeTask(strings.TrimSuffix(up, ".git")+"/basens@v2", strings.TrimSuffix(up, ".git")+"/basens@v4", "team-a/v1", porch.ResourceMerge)
	if string(upgrade.JSON()) != string(want.JSON()) {
		t.Errorf("upgrade draft's task = %s\nwant %s", upgrade.JSON(), want.JSON())
	}
	rq := gitfixture.Git(t, bare, "show", "drafts/team-a/team-a-v4:team-a/resourcequota.yaml")
	if !strings.Contains(rq, `cpu: "50"`) || !strings.Contains(rq, "namespace: team-a") {
		t.Errorf("upgraded draft resourcequota.yaml:\n%s", rq)
	}
	if got := kinds(run(t, bare, false)); got != "none" {
		t.Fatalf("after upgrade = %s, want none", got)
	}
}

// draftTask reads the task of the commit at the tip of a draft branch,
// whose subject must be Porch's for that task.
func draftTask(t *testing.T, bare, branch, subject string) porch.Task {
	t.Helper()
	msg := gitfixture.Git(t, bare, "log", "-1", "--format=%B", branch)
	if !strings.HasPrefix(msg, subject+"\n") {
		t.Errorf("%s: subject is not %q:\n%s", branch, subject, msg)
	}
	tr, found, err := porch.ParseTrailer(msg)
	if err != nil || !found {
		t.Fatalf("%s: no kpt trailer (%v):\n%s", branch, err, msg)
	}
	task, ok, err := tr.ParsedTask()
	if err != nil || !ok {
		t.Fatalf("%s: trailer without a task (%v):\n%s", branch, err, msg)
	}
	return task
}

func TestReconcileLeavesHumanEditsAlone(t *testing.T) {
	t.Parallel()
	up := gitfixture.Blueprints(t)
	bare := downstreamRepo(t, strings.TrimSuffix(up, ".git"), strings.Replace(kptbotYAML, "package: basens}", "package: basens, revision: v2}", 1))
	run(t, bare, false)
	// A person commits to the draft.
	wt := gitfixture.WorkTree(t, bare)
	gitfixture.Git(t, wt, "checkout", "-q", "drafts/team-a/team-a-v2")
	gitfixture.WriteFiles(t, wt, map[string]string{"team-a/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"})
	gitfixture.Git(t, wt, "add", "-A")
	gitfixture.Git(t, wt, "commit", "-q", "-m", "my edit")
	gitfixture.Git(t, wt, "push", "-q", "origin", "HEAD")
	// Change the variant so it wants to edit the draft.
	gitfixture.Git(t, wt, "checkout", "-q", "main")
	cfg := strings.Replace(strings.Replace(kptbotYAML, "package: basens}", "package: basens, revision: v2}", 1), "team: a", "team: a2", 1)
	gitfixture.WriteFiles(t, wt, map[string]string{"kptbot.yaml": strings.ReplaceAll(cfg, "UPSTREAM", strings.TrimSuffix(up, ".git"))})
	gitfixture.CommitAndTag(t, wt, "relabel", "")
	plan := run(t, bare, false)
	if kinds(plan) != "skip" || !strings.Contains(plan[0].Why, "kptbot-test") {
		t.Fatalf("plan = %+v, want skip naming the human author", plan)
	}
}

// TestReconcileRace: two reconcilers at once open one draft, not two.
func TestReconcileRace(t *testing.T) {
	t.Parallel()
	up := gitfixture.Blueprints(t)
	bare := downstreamRepo(t, strings.TrimSuffix(up, ".git"), kptbotYAML)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s, err := gitstore.OpenStore(context.Background(), bare, "main")
			if err != nil {
				errs[i] = err
				return
			}
			_, errs[i] = Run(context.Background(), s, "main", Options{})
		}(i)
	}
	wg.Wait()
	refs := gitfixture.Git(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/drafts")
	if refs != "refs/heads/drafts/team-a/team-a-v4" {
		t.Errorf("drafts after racing reconcilers:\n%s (errors %v)", refs, errs)
	}
	for _, err := range errs {
		if err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Errorf("losing reconciler failed with %v, want a conflict", err)
		}
	}
}

func TestReconcileDeletionPolicy(t *testing.T) {
	t.Parallel()
	up := strings.TrimSuffix(gitfixture.Blueprints(t), ".git")
	for _, policy := range []string{"delete", "orphan"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			cfg := strings.Replace(kptbotYAML, "downstream: {package: team-a}", "downstream: {package: team-a}\n  deletionPolicy: "+policy, 1)
			bare := downstreamRepo(t, up, cfg)
			plan := run(t, bare, false)
			s, _ := gitstore.OpenStore(context.Background(), bare, "main")
			if err := s.Propose(context.Background(), "team-a", plan[0].Workspace); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Approve(context.Background(), "team-a", plan[0].Workspace); err != nil {
				t.Fatal(err)
			}
			// Remove the variant from kptbot.yaml.
			wt := gitfixture.WorkTree(t, bare)
			gitfixture.WriteFiles(t, wt, map[string]string{"kptbot.yaml": strings.SplitN(strings.ReplaceAll(cfg, "UPSTREAM", up), "---", 2)[0]})
			gitfixture.CommitAndTag(t, wt, "drop the variant", "")
			want := map[string]string{"delete": "propose-delete", "orphan": "none"}[policy]
			if got := kinds(run(t, bare, false)); got != want {
				t.Fatalf("plan = %s, want %s", got, want)
			}
			branches := gitfixture.Git(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/deletionProposed")
			if (policy == "delete") != (branches == "refs/heads/deletionProposed/team-a/v1") {
				t.Errorf("deletionProposed branches: %q", branches)
			}
			if got := kinds(run(t, bare, false)); got != want {
				t.Errorf("second run = %s, want %s (idempotent)", got, want)
			}
		})
	}
}

// TestReconcileVariantSet: a PackageVariantSet in the repository's
// kptbot.yaml that selects it by label generates a variant here.
func TestReconcileVariantSet(t *testing.T) {
	t.Parallel()
	up := strings.TrimSuffix(gitfixture.Blueprints(t), ".git")
	cfg := `apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata: {name: edge-7, labels: {tier: edge}}
spec: {updatePolicy: draft}
---
apiVersion: kptbot.dev/v1alpha1
kind: PackageVariantSet
metadata: {name: edge-ns}
spec:
  upstream: {repo: UPSTREAM, package: basens, revision: v3}
  targets:
    - repositorySelector: {matchLabels: {tier: edge}}
      template:
        downstream: {packageExpr: "repository.name + '-ns'"}
        labelExprs: [{key: site, valueExpr: "repository.name"}]
    - repositories: [{name: somewhere-else}]
`
	bare := downstreamRepo(t, up, cfg)
	plan := run(t, bare, false)
	if kinds(plan) != "create-draft" || plan[0].Package != "edge-7-ns" || plan[0].Variant != "edge-ns-edge-7-edge-7-ns" {
		t.Fatalf("plan = %+v", plan)
	}
	kf := gitfixture.Git(t, bare, "show", "drafts/edge-7-ns/"+plan[0].Workspace+":edge-7-ns/Kptfile")
	if !strings.Contains(kf, "site: edge-7") {
		t.Errorf("generated variant's label missing:\n%s", kf)
	}
	if got := kinds(run(t, bare, false)); got != "none" {
		t.Errorf("second run = %s, want none", got)
	}
}

// TestReconcileUpdatesOpenDraft: a newer upstream while the variant's
// draft is still open updates that draft instead of opening a second one.
func TestReconcileUpdatesOpenDraft(t *testing.T) {
	t.Parallel()
	up := strings.TrimSuffix(gitfixture.Blueprints(t), ".git")
	pinned := func(rev string) string {
		return strings.ReplaceAll(strings.Replace(kptbotYAML, "package: basens}", "package: basens, revision: "+rev+"}", 1), "UPSTREAM", up)
	}
	bare := downstreamRepo(t, up, pinned("v2"))
	first := run(t, bare, false)
	wt := gitfixture.WorkTree(t, bare)
	gitfixture.WriteFiles(t, wt, map[string]string{"kptbot.yaml": pinned("v3")})
	gitfixture.CommitAndTag(t, wt, "follow v3", "")
	plan := run(t, bare, false)
	if kinds(plan) != "update-draft" || plan[0].Workspace != first[0].Workspace {
		t.Fatalf("plan = %+v, want update-draft of %s", plan, first[0].Workspace)
	}
	drafts := gitfixture.Git(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/drafts")
	if drafts != "refs/heads/drafts/team-a/"+first[0].Workspace {
		t.Errorf("drafts = %q, want one", drafts)
	}
	rq := gitfixture.Git(t, bare, "show", "drafts/team-a/"+first[0].Workspace+":team-a/resourcequota.yaml")
	if !strings.Contains(rq, `cpu: "50"`) {
		t.Errorf("open draft not moved to v3:\n%s", rq)
	}
}

// TestReconcileRefusesDotDirectoryPackage: plain-git reconcile applies the
// same downstream path rule as the bot (config.CheckPackagePath): a set
// whose expression names .github writes nothing and says why.
func TestReconcileRefusesDotDirectoryPackage(t *testing.T) {
	t.Parallel()
	up := strings.TrimSuffix(gitfixture.Blueprints(t), ".git")
	cfg := `apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata: {name: edge-7}
spec: {}
---
apiVersion: kptbot.dev/v1alpha1
kind: PackageVariantSet
metadata: {name: sneaky}
spec:
  upstream: {repo: UPSTREAM, package: basens, revision: v3}
  targets:
    - repositories: [{name: edge-7}]
      template:
        downstream: {packageExpr: "'.github/workflows'"}
`
	bare := downstreamRepo(t, up, cfg)
	s, err := gitstore.OpenStore(context.Background(), bare, "main")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), s, "main", Options{})
	if err == nil || !strings.Contains(err.Error(), `PackageVariantSet sneaky: spec.targets[0]: the downstream package ".github/workflows"`) || !strings.Contains(err.Error(), "dot-directory") {
		t.Fatalf("Run = %v, want the set's dot-directory package refused", err)
	}
	if refs := gitfixture.Git(t, bare, "for-each-ref", "--format=%(refname)"); strings.Contains(refs, "drafts/") || strings.Contains(refs, ".github") {
		t.Errorf("refs after a refused set: %s", refs)
	}
}
