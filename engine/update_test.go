package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/pkgmerge"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/internal/gitfixture"
	"github.com/kptbot/kptbot/internal/golden"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/yaml"
)

// updateCase is testdata/update/<case>/case.yaml.
type updateCase struct {
	// Package is the package path in the upstream repo (default "pkg").
	Package string `json:"package"`
	// From and To are the versions to get and to update to.
	From string `json:"from"`
	To   string `json:"to"`
	// Strategy is passed to Update (empty: the Kptfile's).
	Strategy string `json:"strategy"`
	// GetStrategy is recorded at get time.
	GetStrategy string `json:"getStrategy"`
	// Delete lists local files removed after get.
	Delete []string `json:"delete"`
	// Edits are local string replacements made after get.
	Edits []struct {
		File string `json:"file"`
		Old  string `json:"old"`
		New  string `json:"new"`
	} `json:"edits"`
}

// buildUpstream commits each testdata/update/<case>/upstream/<version>/
// tree, in version order, as the package and tags it <package>/<version>.
func buildUpstream(t *testing.T, caseDir, pkg string) string {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "upstream.git")
	gitfixture.Git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	wt := filepath.Join(root, "wt")
	gitfixture.Git(t, root, "clone", "-q", bare, wt)
	versions, err := os.ReadDir(filepath.Join(caseDir, "upstream"))
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(versions))
	for _, v := range versions {
		names = append(names, v.Name())
	}
	sort.Strings(names)
	for _, v := range names {
		if err := os.RemoveAll(filepath.Join(wt, pkg)); err != nil {
			t.Fatal(err)
		}
		tree, err := kptpkg.ReadTree(filepath.Join(caseDir, "upstream", v))
		if err != nil {
			t.Fatal(err)
		}
		if err := tree.Write(filepath.Join(wt, pkg)); err != nil {
			t.Fatal(err)
		}
		gitfixture.Git(t, wt, "add", "-A")
		gitfixture.Git(t, wt, "commit", "-q", "--allow-empty", "-m", pkg+" "+v)
		gitfixture.Git(t, wt, "tag", pkg+"/"+v)
	}
	gitfixture.Git(t, wt, "push", "-q", "origin", "HEAD:main", "--tags")
	return bare
}

func TestUpdateGolden(t *testing.T) {
	gitfixture.RequireGit(t)
	for _, name := range golden.CaseDirs(t, "update") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			caseDir := filepath.Join("testdata", "update", name)
			var c updateCase
			b, err := os.ReadFile(filepath.Join(caseDir, "case.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.UnmarshalStrict(b, &c); err != nil {
				t.Fatalf("case.yaml: %v", err)
			}
			if c.Package == "" {
				c.Package = "pkg"
			}
			var repo string
			if _, err := os.Stat(filepath.Join(caseDir, "upstream")); err == nil {
				repo = strings.TrimSuffix(buildUpstream(t, caseDir, c.Package), ".git")
			} else {
				repo = strings.TrimSuffix(gitfixture.Blueprints(t), ".git")
			}
			ctx := context.Background()
			f := fetch.NewClient()
			dest := filepath.Join(t.TempDir(), "local")
			if _, err := Get(ctx, f, dest, GetOptions{Repo: repo, Dir: "/" + c.Package, Version: c.From, Strategy: strategyType(c.GetStrategy)}); err != nil {
				t.Fatalf("Get: %v", err)
			}
			fetched, err := kptpkg.ReadTree(dest)
			if err != nil {
				t.Fatal(err)
			}
			inMem, _, err := GetTree(ctx, f, filepath.Base(dest), GetOptions{Repo: repo, Dir: "/" + c.Package, Version: c.From, Strategy: strategyType(c.GetStrategy)})
			if err != nil {
				t.Fatalf("GetTree: %v", err)
			}
			golden.SameTrees(t, "GetTree against Get", fetched, inMem)
			if edits := filepath.Join(caseDir, "local-edits"); golden.Exists(edits) {
				tree, err := kptpkg.ReadTree(edits)
				if err != nil {
					t.Fatal(err)
				}
				if err := tree.Write(dest); err != nil {
					t.Fatal(err)
				}
			}
			for _, e := range c.Edits {
				p := filepath.Join(dest, e.File)
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(b), e.Old) {
					t.Fatalf("edit of %s: %q not found in:\n%s", e.File, e.Old, b)
				}
				if err := os.WriteFile(p, []byte(strings.Replace(string(b), e.Old, e.New, 1)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, d := range c.Delete {
				if err := os.RemoveAll(filepath.Join(dest, d)); err != nil {
					t.Fatal(err)
				}
			}
			before, err := kptpkg.ReadTree(dest)
			if err != nil {
				t.Fatal(err)
			}
			norm := golden.Replacer(repo, "UPSTREAM", dest, "LOCAL")
			memGot, memRes, memErr := UpdateTree(ctx, f, dest, before, UpdateOptions{Version: c.To, Strategy: c.Strategy})
			if untouched, err := kptpkg.ReadTree(dest); err != nil || !untouched.Equal(before) {
				t.Fatalf("UpdateTree changed %s (%v)", dest, err)
			}
			res, err := Update(ctx, f, dest, UpdateOptions{Version: c.To, Strategy: c.Strategy})
			if (err == nil) != (memErr == nil) || err != nil && err.Error() != memErr.Error() {
				t.Errorf("UpdateTree's error %v, Update's %v", memErr, err)
			}
			if err != nil {
				golden.CheckFile(t, filepath.Join(caseDir, "error.txt"), norm([]byte(err.Error()+"\n")))
				after, rerr := kptpkg.ReadTree(dest)
				if rerr != nil {
					t.Fatal(rerr)
				}
				if a, r, m := before.Changes(after); len(a)+len(r)+len(m) > 0 {
					t.Errorf("failed update changed the package: added %v removed %v modified %v", a, r, m)
				}
				return
			}
			if golden.Exists(filepath.Join(caseDir, "error.txt")) && !*golden.Update {
				t.Fatalf("Update succeeded, want the error in error.txt")
			}
			got, err := kptpkg.ReadTree(dest)
			if err != nil {
				t.Fatal(err)
			}
			golden.CheckTree(t, filepath.Join(caseDir, "want"), got, norm)
			golden.SameTrees(t, "UpdateTree against Update", got, memGot)
			if d := cmp.Diff(res, memRes); memErr == nil && d != "" {
				t.Errorf("UpdateTree's result differs from Update's (-Update +UpdateTree):\n%s", d)
			}
			if res.Conflicts == nil {
				res.Conflicts = []pkgmerge.Conflict{}
			}
			cj, _ := json.MarshalIndent(res.Conflicts, "", "  ")
			golden.CheckFile(t, filepath.Join(caseDir, "conflicts.json"), append(cj, '\n'))
		})
	}
}

func strategyType(s string) kptfilev1.UpdateStrategyType { return kptfilev1.UpdateStrategyType(s) }
