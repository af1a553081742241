package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/gitstore"
	"github.com/kptbot/kptbot/internal/gitfixture"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestRpkgPorchctlHabits drives the rpkg verbs the way porchctl users do:
// --repository, package revision names (repository.package.workspace)
// instead of PACKAGE --workspace WS, get with porchctl's columns and
// -o yaml, upgrade of a published revision in one step, one row per
// revision after propose-delete, and every verb saying what it did.
func TestRpkgPorchctlHabits(t *testing.T) {
	t.Parallel()
	blueprints := gitfixture.Blueprints(t)
	root := t.TempDir()
	deploy := filepath.Join(root, "deploy.git")
	gitfixture.Git(t, root, "init", "-q", "--bare", "-b", "main", deploy)
	wt := gitfixture.WorkTree(t, deploy)
	gitfixture.WriteFiles(t, wt, map[string]string{"README.md": "deploy\n"})
	gitfixture.CommitAndTag(t, wt, "initial", "")
	run := func(want string, args ...string) string {
		t.Helper()
		out, stderr, code := kptbot(t, append(args, "--repository", deploy)...)
		if code != 0 {
			t.Fatalf("kptbot %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
		}
		if !strings.Contains(out, want) {
			t.Errorf("kptbot %s says %q, want it to say %q", strings.Join(args, " "), out, want)
		}
		return out
	}
	run("team-a/w cloned from", "rpkg", "clone", "file://"+blueprints+"/basens@v2", "team-a", "--workspace", "w")
	run("team-a/w: propose done", "rpkg", "propose", "deploy.team-a.w")
	run("team-a/w published as team-a/v1", "rpkg", "approve", "deploy.team-a.w")

	// Upgrading the published revision is one step: a new draft with the
	// newer upstream merged in.
	run("team-a/up created from team-a/v1 and upgraded to basens/v3", "rpkg", "upgrade", "deploy.team-a.w", "--workspace", "up", "--to", "v3")
	if got := gitfixture.Git(t, deploy, "show", "drafts/team-a/up:team-a/resourcequota.yaml"); !strings.Contains(got, `cpu: "50"`) {
		t.Errorf("the upgrade draft does not hold upstream v3:\n%s", got)
	}
	out := run("NAME", "rpkg", "get")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "NAME PACKAGE WORKSPACENAME REVISION LATEST LIFECYCLE REPOSITORY" {
		t.Errorf("rpkg get columns %v: want porchctl's", got)
	}
	for _, want := range [][]string{
		{"deploy.team-a.w", "team-a", "w", "1", "true", "Published", "deploy"},
		{"deploy.team-a.up", "team-a", "up", "0", "false", "Draft", "deploy"},
	} {
		if !containsRow(lines[1:], want) {
			t.Errorf("rpkg get lacks the row %v:\n%s", want, out)
		}
	}

	// -o yaml of one revision is that PackageRevision.
	var pr gitstore.PackageRevisionObject
	if err := sigsyaml.UnmarshalStrict([]byte(run("kind: PackageRevision", "rpkg", "get", "deploy.team-a.w", "-o", "yaml")), &pr); err != nil {
		t.Fatal(err)
	}
	if pr.Metadata.Name != "deploy.team-a.w" || pr.Spec.PackageName != "team-a" || pr.Spec.Revision != 1 || pr.Spec.Lifecycle != "Published" ||
		pr.Metadata.Labels["kpt.dev/latest-revision"] != "true" {
		t.Errorf("rpkg get -o yaml: %+v", pr)
	}
	var list struct {
		Items []gitstore.PackageRevisionObject
	}
	if err := sigsyaml.Unmarshal([]byte(run(`"kind": "List"`, "rpkg", "get", "team-a", "-o", "json")), &list); err != nil || len(list.Items) != 2 {
		t.Errorf("rpkg get PACKAGE -o json: %d items, %v", len(list.Items), err)
	}

	// pull by name, of a draft and of a published revision.
	dir := filepath.Join(root, "edit")
	run("team-a/up pulled into "+dir, "rpkg", "pull", "deploy.team-a.up", dir)
	if _, err := os.Stat(filepath.Join(dir, "Kptfile")); err != nil {
		t.Error(err)
	}
	run("team-a/v1 pulled into", "rpkg", "pull", "deploy.team-a.w", filepath.Join(root, "published"))

	// propose-delete: one row, DeletionProposed; then del.
	run("team-a/v1 proposed for deletion", "rpkg", "propose-delete", "deploy.team-a.w")
	out = run("DeletionProposed", "rpkg", "get", "team-a")
	if n := strings.Count(out, "deploy.team-a.w "); n != 1 || strings.Contains(out, "Published") {
		t.Errorf("after propose-delete, rpkg get lists the revision %d times:\n%s", n, out)
	}
	run("team-a/up deleted", "rpkg", "del", "deploy.team-a.up")
	run("team-a/v1 deleted", "rpkg", "del", "deploy.team-a.w")

	// Bad names and failed upgrades say what is wrong, without temp paths.
	_, stderr, code := kptbot(t, "rpkg", "approve", "other.team-a.w", "--repo", deploy)
	if code == 0 || !strings.Contains(stderr, `start with "deploy."`) {
		t.Errorf("a name from another repository: exit %d, %s", code, stderr)
	}
	run("team-b/w cloned", "rpkg", "clone", "file://"+blueprints+"/basens@v2", "team-b", "--workspace", "w")
	_, stderr, code = kptbot(t, "rpkg", "upgrade", "deploy.team-b.w", "--to", "v99", "--repo", deploy)
	if code == 0 || !strings.Contains(stderr, "upgrading team-b/w") || strings.Contains(stderr, "kptbot-rpkg-") {
		t.Errorf("a failed upgrade: exit %d, %s", code, stderr)
	}
}

// containsRow reports whether a table line has exactly these fields.
func containsRow(lines []string, fields []string) bool {
	for _, l := range lines {
		if strings.Join(strings.Fields(l), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}
