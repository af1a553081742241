package action

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/github/githubtest"
	"github.com/kptbot/kptbot/internal/fleettest"
)

// TestActionWriteMode runs a scheduled `kptbot action` on a repository
// whose kptbot.yaml follows a tagged upstream package, with each
// write-mode input, and counts the REST writes (every request but GET and
// HEAD; git pushes are not REST) the run sends the fake GitHub: the clone
// pull request and its check run in the standard mode, the pull request
// alone in single mode (its description carries the render result; the
// base branch requires no check).
func TestActionWriteMode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode  string
		check bool
		want  []string
	}{
		{"standard", true, []string{"POST /repos/acme/site-a/check-runs", "POST /repos/acme/site-a/pulls"}},
		{"single", false, []string{"POST /repos/acme/site-a/pulls"}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			w := &e2eWorld{t: t, gh: githubtest.New(t), dir: t.TempDir(), inputs: map[string]string{"INPUT_WRITE-MODE": c.mode}}
			up := forge.Repo{Forge: forge.GitHub, FullName: "acme/blueprints", DefaultBranch: "main", CloneURL: w.gh.GitURL + "acme/blueprints.git"}
			sha := w.gh.Seed(up, "main", map[string][]byte{"basens/Kptfile": []byte(e2eKptfile), "basens/cm.yaml": []byte(e2eConfigMap)})
			plain, err := github.NewClient(nil, w.gh.URL)
			if err != nil {
				t.Fatal(err)
			}
			if err := plain.CreateTag(context.Background(), up, "basens/v1", sha, ""); err != nil {
				t.Fatal(err)
			}
			w.repo = forge.Repo{Forge: forge.GitHub, FullName: "acme/site-a", DefaultBranch: "main", CloneURL: w.gh.GitURL + "acme/site-a.git"}
			w.gh.Seed(w.repo, "main", map[string][]byte{"kptbot.yaml": []byte(fleettest.Follower("ns"))})
			var mu sync.Mutex
			var writes []string
			w.gh.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodGet && r.Method != http.MethodHead && !strings.Contains(r.URL.Path, ".git/") {
					mu.Lock()
					writes = append(writes, r.Method+" "+r.URL.Path)
					mu.Unlock()
				}
				return false
			})
			outputs, summary := w.run("schedule", []byte(`{"schedule":"*/30 * * * *"}`), ModeReconcile)
			mu.Lock()
			got := append([]string(nil), writes...)
			mu.Unlock()
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("REST writes of the run:\n%s\nwant:\n%s\noutputs %v\nsummary:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"), outputs, summary)
			}
			changes, err := plain.ListOpenChanges(context.Background(), w.repo)
			if err != nil || len(changes) != 1 {
				t.Fatalf("pull requests on the follower: %+v, %v; want the clone", changes, err)
			}
			if _, ok := w.gh.Check(w.repo, changes[0].HeadSHA, "kptbot/team-ns"); ok != c.check {
				t.Errorf("check run on the clone's head: %v, want %v", ok, c.check)
			}
		})
	}
}
