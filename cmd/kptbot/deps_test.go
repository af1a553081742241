package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoKubernetesClient: the kptbot binary links neither
// client-go nor kubectl (nor kpt's renderer, kptops, which brought them):
// their package initialisation (API schemes, the scale client, OpenAPI
// models) was about half of every CLI call's start-up, and kptbot talks
// to no cluster. Tests may still import them to compare with kpt.
func TestBinaryLinksNoKubernetesClient(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is needed to list the binary's packages")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps listed only %d packages: %q", len(deps), deps)
	}
	for _, p := range deps {
		for _, banned := range []string{"k8s.io/client-go", "k8s.io/kubectl", "github.com/kptdev/kpt/pkg/lib/kptops", "github.com/kptdev/kpt/internal/util/render"} {
			if p == banned || strings.HasPrefix(p, banned+"/") {
				t.Errorf("the kptbot binary links %s", p)
			}
		}
	}
}
