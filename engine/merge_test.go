package engine

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kptdev/kpt/pkg/lib/update"
	"github.com/kptdev/kpt/pkg/lib/update/updatetypes"
)

// mutate returns a copy of t with seeded random edits: changed values,
// removed documents, new files and new resources.
func mutate(t Tree, r *rand.Rand, tag string) Tree {
	out := Tree{}
	for p, b := range t {
		s := string(b)
		if p != KptfileName {
			switch r.Intn(7) {
			case 0:
				s = strings.Replace(s, "replicas: 1", "replicas: "+fmt.Sprint(2+r.Intn(5)), 1)
			case 1:
				s = strings.Replace(s, "image: nginx:1.25", "image: nginx:"+tag, 1)
			case 2:
				if docs := strings.Split(s, "---\n"); len(docs) > 1 {
					i := r.Intn(len(docs))
					s = strings.Join(append(docs[:i:i], docs[i+1:]...), "---\n")
				}
			case 3:
				s = strings.Replace(s, "key: value", "key: "+tag, 1)
			case 4:
				s += "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra-" + tag + "\ndata:\n  a: b\n"
			case 5:
				s = strings.Replace(s, "ports:", "ports: # "+tag, 1)
			}
		}
		out[p] = []byte(s)
	}
	if r.Intn(2) == 0 {
		out["new-"+tag+".yaml"] = []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s-" + tag + "\n")
	}
	if r.Intn(3) == 0 {
		out["notes-"+tag+".txt"] = []byte("hello " + tag + "\n")
	}
	return out
}

// TestResourceMergeMatchesKpt runs kpt's own ResourceMergeUpdater and
// kptbot's map-matched merge on the same random triples and requires
// byte-identical packages.
func TestResourceMergeMatchesKpt(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewSource(seed))
		origin := genPackage(30+r.Intn(30), 1)
		origin["README.md"] = []byte("readme\n")
		updated := mutate(origin, r, "up")
		local := mutate(origin, r, "local")
		dir := t.TempDir()
		write := func(name string, tr Tree) string {
			p := filepath.Join(dir, name)
			if err := tr.Write(p); err != nil {
				t.Fatal(err)
			}
			return p
		}
		// Each merge gets its own copies: kpt's updater is not guaranteed
		// to leave its inputs alone.
		o1, u1, l1 := write("o1", origin), write("u1", updated), write("kpt", local)
		o2, u2, l2 := write("o2", origin), write("u2", updated), write("kptbot", local)
		// kpt's update command adds merge comments to the three trees on
		// disk first; kptbot adds them to what it parses.
		if err := addMergeCommentsToDirs(o1, u1, l1); err != nil {
			t.Fatal(err)
		}
		err1 := update.GetUpdater("resource-merge").Update(updatetypes.Options{RelPackagePath: ".", LocalPath: l1, UpdatedPath: u1, OriginPath: o1, IsRoot: true})
		_, err2 := resourceMerge(l2, u2, o2, true)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("seed %d: kpt error %v, kptbot error %v", seed, err1, err2)
		}
		// Compare what Update leaves on disk: files whose meaning did not
		// change keep the local bytes (preserveUntouched), whoever wrote them.
		want, _ := ReadTree(l1)
		got, _ := ReadTree(l2)
		preserveUntouched(local, want)
		preserveUntouched(local, got)
		for _, p := range unionPaths(want, got) {
			if string(want[p]) != string(got[p]) && os.Getenv("MERGE_DUMP") != "" {
				os.WriteFile(fmt.Sprintf("/tmp/md-%d-kpt-%s", seed, filepath.Base(p)), want[p], 0o644)
				os.WriteFile(fmt.Sprintf("/tmp/md-%d-bot-%s", seed, filepath.Base(p)), got[p], 0o644)
				for n, tr := range map[string]Tree{"o": origin, "u": updated, "l": local} {
					os.WriteFile(fmt.Sprintf("/tmp/md-%d-%s-%s", seed, n, filepath.Base(p)), tr[p], 0o644)
				}
			}
			if string(want[p]) != string(got[p]) {
				t.Errorf("seed %d: %s differs (-kpt +kptbot):\n%s", seed, p, cmp.Diff(string(want[p]), string(got[p])))
			}
		}
		os.RemoveAll(dir)
	}
}
