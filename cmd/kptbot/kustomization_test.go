package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/internal/gitfixture"
)

// TestRenderFailureWithKustomization: a kustomization.yaml without
// apiVersion and kind is content kpt's KRM check lets through, so when a
// render fails the error is the function's, not a complaint about it.
func TestRenderFailureWithKustomization(t *testing.T) {
	t.Parallel()
	pkg := filepath.Join(t.TempDir(), "app")
	gitfixture.WriteFiles(t, pkg, map[string]string{
		"Kptfile":            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: set-namespace:v0.4\n",
		"kustomization.yaml": "resources:\n- deploy.yaml\n",
		"deploy.yaml":        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
	})
	_, stderr, code := kptbot(t, "fn", "render", pkg)
	if code == 0 {
		t.Fatalf("render without set-namespace's config succeeded:\n%s", stderr)
	}
	if strings.Contains(stderr, "kustomization.yaml") || !strings.Contains(stderr, "set-namespace") {
		t.Errorf("render error should be set-namespace's, not about kustomization.yaml:\n%s", stderr)
	}
}
