package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/internal/gitfixture"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
)

// A package kpt (or kptbot) rendered records the render in its Kptfile;
// a fast-forward update, as kpt's, does not count that as a local change
// and drops the stale record.
func TestFastForwardIgnoresRenderRecord(t *testing.T) {
	gitfixture.RequireGit(t)
	t.Parallel()
	repo := strings.TrimSuffix(gitfixture.Blueprints(t), ".git")
	ctx := context.Background()
	f := fetch.NewClient()
	dest := filepath.Join(t.TempDir(), "local")
	if _, err := Get(ctx, f, dest, GetOptions{Repo: repo, Dir: "/basens", Version: "v2", Strategy: kptfilev1.FastForward}); err != nil {
		t.Fatalf("Get: %v", err)
	}
	p := filepath.Join(dest, kptpkg.KptfileName)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// what kpt v1.0.0-beta.67 appends after a render
	rendered := string(b) + `status:
  conditions:
    - type: Rendered
      status: "True"
      reason: RenderSuccess
  renderStatus:
    mutationSteps:
      - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:latest
        exitCode: 0
        results:
          - message: namespace [default] updated to "staging", 1 value(s) changed
            severity: info
`
	if err := os.WriteFile(p, []byte(rendered), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Update(ctx, f, dest, UpdateOptions{Version: "v3", Strategy: string(kptfilev1.FastForward)}); err != nil {
		t.Fatalf("fast-forward update of a rendered package: %v", err)
	}
	after, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(after), "renderStatus") || strings.Contains(string(after), "Rendered") {
		t.Errorf("the stale render record survived the update:\n%s", after)
	}
}
