package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/kpt/pkg/lib/update"
	"github.com/kptdev/kpt/pkg/lib/update/updatetypes"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

const (
	rootKf = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
upstream:
  type: git
  git:
    repo: https://example.com/r
    directory: /pkg
    ref: %s
  updateStrategy: %s
upstreamLock:
  type: git
  git:
    repo: https://example.com/r
    directory: /pkg
    ref: %s
    commit: %s
`
	localSubKf  = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n"
	remoteSubKf = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: remote\nupstream:\n  type: git\n  git:\n    repo: https://example.com/o\n    directory: /x\n    ref: v1\n"
	cm          = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  annotations:\n    cnrm.cloud.google.com/blueprint: %s\ndata:\n  k: %s\n"
)

func kf(ref string) []byte {
	return []byte(fmt.Sprintf(rootKf, ref, "fast-forward", ref, ref+"-sha"))
}

// updaterCase is one local/origin/updated triple the fast-forward,
// force-delete-replace and copy-merge updaters are run on.
type updaterCase struct {
	name                   string
	local, origin, updated kptpkg.Tree
}

func updaterCases() []updaterCase {
	origin := kptpkg.Tree{
		kptpkg.KptfileName:             kf("v1"),
		"a.yaml":                       []byte(fmt.Sprintf(cm, "a", "krm", "1")),
		"gone.yaml":                    []byte(fmt.Sprintf(cm, "gone", "krm", "1")),
		"dir/b.yaml":                   []byte(fmt.Sprintf(cm, "b", "krm", "1")),
		"sub/Kptfile":                  []byte(localSubKf),
		"sub/s.yaml":                   []byte(fmt.Sprintf(cm, "s", "krm", "1")),
		"sub/deep/Kptfile":             []byte(localSubKf),
		"sub/deep/d.yaml":              []byte(fmt.Sprintf(cm, "d", "krm", "1")),
		"remote/Kptfile":               []byte(remoteSubKf),
		"remote/r.yaml":                []byte(fmt.Sprintf(cm, "r", "krm", "1")),
		"remote/inner/Kptfile":         []byte(localSubKf),
		"remote/inner/i.yaml":          []byte(fmt.Sprintf(cm, "i", "krm", "1")),
		"subx/x.yaml":                  []byte(fmt.Sprintf(cm, "x", "krm", "1")),
		"notkrm.txt":                   []byte("plain\n"),
		".git/config":                  []byte("[core]\n"),
		"sub/removedsub/Kptfile":       []byte(localSubKf),
		"sub/removedsub/removed.yaml":  []byte(fmt.Sprintf(cm, "rm", "krm", "1")),
		"emptyafter/only.yaml":         []byte(fmt.Sprintf(cm, "only", "krm", "1")),
		"remote/inner/more/more.yaml":  []byte(fmt.Sprintf(cm, "more", "krm", "1")),
		"dir/nested/deeper/leaf.yaml":  []byte(fmt.Sprintf(cm, "leaf", "krm", "1")),
		"dir/nested/deeper/leaf2.yaml": []byte(fmt.Sprintf(cm, "leaf2", "krm", "1")),
	}
	updated := kptpkg.Tree{}
	for p, c := range origin {
		updated[p] = c
	}
	updated[kptpkg.KptfileName] = kf("v2")
	updated["a.yaml"] = []byte(fmt.Sprintf(cm, "a", "krm", "2"))
	delete(updated, "gone.yaml")
	delete(updated, "emptyafter/only.yaml")
	delete(updated, "sub/removedsub/Kptfile")
	delete(updated, "sub/removedsub/removed.yaml")
	updated["new.yaml"] = []byte(fmt.Sprintf(cm, "new", "krm", "2"))
	updated["sub/new.yaml"] = []byte(fmt.Sprintf(cm, "subnew", "krm", "2"))
	updated["remote/r.yaml"] = []byte(fmt.Sprintf(cm, "r", "krm", "2"))
	updated["newsub/Kptfile"] = []byte(localSubKf)
	updated["newsub/n.yaml"] = []byte(fmt.Sprintf(cm, "n", "krm", "2"))

	same := clone(origin)
	attributed := clone(origin) // only the blueprint annotation differs
	attributed["a.yaml"] = []byte(fmt.Sprintf(cm, "a", "krm-pkg", "1"))
	edited := clone(origin)
	edited["dir/b.yaml"] = []byte(fmt.Sprintf(cm, "b", "krm", "edited"))
	added := clone(origin)
	added["mine.yaml"] = []byte(fmt.Sprintf(cm, "mine", "krm", "1"))
	subEdited := clone(origin)
	subEdited["sub/deep/d.yaml"] = []byte(fmt.Sprintf(cm, "d", "krm", "edited"))
	remoteEdited := clone(origin)
	remoteEdited["remote/inner/i.yaml"] = []byte(fmt.Sprintf(cm, "i", "krm", "edited"))
	kfEdited := clone(origin)
	kfEdited[kptpkg.KptfileName] = append(kf("v1"), "info:\n  description: mine\n"...)
	noSub := clone(origin)
	delete(noSub, "sub/deep/Kptfile")
	delete(noSub, "sub/deep/d.yaml")
	textEdited := clone(origin)
	textEdited["notkrm.txt"] = []byte("changed\n")
	return []updaterCase{
		{"unchanged", same, origin, updated},
		{"attribution only", attributed, origin, updated},
		{"file edited", edited, origin, updated},
		{"file added", added, origin, updated},
		{"local subpackage edited", subEdited, origin, updated},
		{"subpackage of a remote one edited", remoteEdited, origin, updated},
		{"Kptfile edited", kfEdited, origin, updated},
		{"local subpackage deleted", noSub, origin, updated},
		{"text file edited", textEdited, origin, updated},
	}
}

func clone(t kptpkg.Tree) kptpkg.Tree {
	out := kptpkg.Tree{}
	for p, c := range t {
		out[p] = c
	}
	return out
}

// TestUpdatersMatchKpt runs kptbot's fast-forward, force-delete-replace
// and copy-merge updaters and kpt's own on the same trees: same files
// afterwards, byte for byte, and the same refusals.
func TestUpdatersMatchKpt(t *testing.T) {
	t.Parallel()
	ours := map[string]func(l, u, o string, root bool) error{
		"fast-forward":         fastForward,
		"force-delete-replace": replacePackage,
		"copy-merge":           copyMerge,
	}
	for _, c := range updaterCases() {
		for strategy, run := range ours {
			for _, isRoot := range []bool{true, false} {
				dirs := [2]string{}
				errs := [2]error{}
				for i := range dirs {
					base := t.TempDir()
					local, origin, updated := filepath.Join(base, "local"), filepath.Join(base, "origin"), filepath.Join(base, "updated")
					for dir, tree := range map[string]kptpkg.Tree{local: c.local, origin: c.origin, updated: c.updated} {
						if err := tree.Write(dir); err != nil {
							t.Fatal(err)
						}
					}
					if i == 0 {
						errs[i] = update.GetUpdater(strategy).Update(updatetypes.Options{
							RelPackagePath: ".", LocalPath: local, UpdatedPath: updated, OriginPath: origin, IsRoot: isRoot})
					} else {
						errs[i] = run(local, updated, origin, isRoot)
					}
					dirs[i] = local
				}
				name := c.name + "/" + strategy
				if isRoot {
					name += "/root"
				}
				if (errs[0] == nil) != (errs[1] == nil) {
					t.Errorf("%s: kpt error %v, kptbot error %v", name, errs[0], errs[1])
					continue
				}
				if diff := cmp.Diff(readAll(t, dirs[0]), readAll(t, dirs[1])); diff != "" {
					t.Errorf("%s: (-kpt +kptbot):\n%s", name, diff)
				}
			}
		}
	}
}

// readAll maps every file and directory under root to its content
// ("<dir>" for directories).
func readAll(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			out[rel] = "<dir>"
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
