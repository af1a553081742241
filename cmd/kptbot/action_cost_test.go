package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github/githubtest"
)

// TestActionNothingToDoCost measures `kptbot action` on a repository with
// nothing to do (a scheduled run: a published package, no pull request,
// no variant), as a workflow step runs it: the built kptbot binary as a
// whole process against the fake GitHub (REST checked against GitHub's
// OpenAPI description, repositories served over git), 7 runs, medians of
// wall time and peak RSS, and the API requests each run makes. The fake
// answers at once, so the wall time is kptbot's own; a real run adds the
// requests times GitHub's latency (they are made one after another).
// It reports, it does not assert (speed is for `make bench`, which runs
// it with KPTBOT_MEASURE=1); skipped otherwise.
func TestActionNothingToDoCost(t *testing.T) {
	if os.Getenv("KPTBOT_MEASURE") == "" {
		t.Skip("a measurement: make bench runs it (KPTBOT_MEASURE=1)")
	}
	bin := filepath.Join(t.TempDir(), "kptbot")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building kptbot: %v\n%s", err, out)
	}
	gh := githubtest.New(t)
	repo := forge.Repo{Forge: forge.GitHub, FullName: "acme/site-a", DefaultBranch: "main"}
	kf := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ns\npipeline:\n  mutators:\n    - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1\n      configMap:\n        namespace: team-a\n"
	gh.Seed(repo, "main", map[string][]byte{"ns/Kptfile": []byte(kf),
		"ns/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: team-a\ndata:\n  a: \"1\"\n")})
	var requests atomic.Int64
	gh.Intercept(func(http.ResponseWriter, *http.Request) bool { requests.Add(1); return false })
	dir := t.TempDir()
	event := filepath.Join(dir, "event.json")
	if err := os.WriteFile(event, []byte(`{"schedule":"*/30 * * * *"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var ms, mb []float64
	var reqs []int64
	for i := 0; i < 7; i++ {
		cmd := exec.Command(bin, "action")
		cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/site-a", "GITHUB_EVENT_NAME=schedule",
			"GITHUB_EVENT_PATH="+event, "GITHUB_API_URL="+gh.URL, "GITHUB_SERVER_URL="+strings.TrimSuffix(gh.GitURL, "/"),
			fmt.Sprintf("GITHUB_RUN_ID=%d", 100+i), "GITHUB_RUN_ATTEMPT=1", "GITHUB_OUTPUT="+filepath.Join(dir, "output"),
			"GITHUB_STEP_SUMMARY="+filepath.Join(dir, "summary.md"), "INPUT_TOKEN=ghs_measureToken", "KPTBOT_BOT_LOGIN=kptbot[bot]")
		before := requests.Load()
		start := time.Now()
		out, err := cmd.CombinedOutput()
		elapsed := time.Since(start)
		if err != nil {
			t.Fatalf("kptbot action: %v\n%s", err, out)
		}
		if i == 0 {
			summary, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
			t.Logf("first run's step summary:\n%s", summary)
		}
		ms = append(ms, float64(elapsed.Microseconds())/1000)
		mb = append(mb, float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)/1024)
		reqs = append(reqs, requests.Load()-before)
	}
	med := func(xs []float64) float64 {
		s := append([]float64(nil), xs...)
		sort.Float64s(s)
		return s[len(s)/2]
	}
	t.Logf("kptbot action, nothing to do: %.0f ms wall (median of %d, min %.0f), %.1f MB peak RSS, %d API requests per run (fake GitHub, no latency)",
		med(ms), len(ms), minOf(ms), med(mb), reqs[len(reqs)-1])
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}
