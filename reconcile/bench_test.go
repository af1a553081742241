package reconcile

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/gitstore"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

// BenchmarkReconcile200 measures one upstream publish fanned out to 200
// downstream repositories: each has tenant-ns published from basens v2
// and follows latest (v4), so each reconcile opens an update draft
// (3-way merge, variant, render). It reports the cost per variant.
func BenchmarkReconcile200(b *testing.B) {
	const n = 200
	up := strings.TrimSuffix(gitfixture.Blueprints(b), ".git")
	template := downstreamRepo(b, up, strings.Replace(kptbotYAML, "package: basens}", "package: basens, revision: v2}", 1))
	ctx := context.Background()
	s, err := gitstore.OpenStore(ctx, template, "main")
	if err != nil {
		b.Fatal(err)
	}
	plan, err := Run(ctx, s, "main", Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Propose(ctx, "team-a", plan[0].Workspace); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Approve(ctx, "team-a", plan[0].Workspace); err != nil {
		b.Fatal(err)
	}
	wt := gitfixture.WorkTree(b, template)
	gitfixture.WriteFiles(b, wt, map[string]string{"kptbot.yaml": strings.ReplaceAll(kptbotYAML, "UPSTREAM", up)})
	gitfixture.CommitAndTag(b, wt, "follow latest", "")
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		root := b.TempDir()
		repos := make([]string, n)
		for j := range repos {
			repos[j] = filepath.Join(root, fmt.Sprintf("site-%03d.git", j))
			if out, err := exec.Command("cp", "-r", template, repos[j]).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
		b.StartTimer()
		start := time.Now()
		for _, repo := range repos {
			s, err := gitstore.OpenStore(ctx, repo, "main")
			if err != nil {
				b.Fatal(err)
			}
			plan, err := Run(ctx, s, "main", Options{})
			if err != nil {
				b.Fatal(err)
			}
			if len(plan) != 1 || plan[0].Kind != "create-draft" {
				b.Fatalf("plan = %+v", plan)
			}
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N*n), "ms/variant")
}
