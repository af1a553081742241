package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/fneval"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/render"
)

// kpt's package reader skips what .krmignore names (kpt's own e2e cases
// keep their .expected/ directory out that way): eval and render see only
// package content, and a non-KRM YAML file there is still refused, naming
// it, as kpt does.
func TestKrmignoredFilesAreNotPackageContent(t *testing.T) {
	t.Parallel()
	pkg := func(krmignore bool) kptpkg.Tree {
		t := kptpkg.Tree{
			kptpkg.KptfileName:       []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"),
			"cm.yaml":                []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"),
			".expected/config.yaml":  []byte("exitCode: 1\nstdErr: boom\n"),
			"sub/Kptfile":            []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n"),
			"sub/.expected/out.yaml": []byte("- not\n- krm\n"),
		}
		if krmignore {
			t[".krmignore"] = []byte(".expected\n")
			t["sub/.krmignore"] = []byte(".expected\n")
		}
		return t
	}
	ctx := context.Background()
	res, err := fneval.EvalTree(ctx, pkg(true), fneval.EvalOptions{Image: "set-labels:v0.2", Args: []string{"app=shop"}})
	if err != nil {
		t.Fatalf("eval: %v", err)
	}
	if !strings.Contains(string(res.Tree["cm.yaml"]), "app: shop") {
		t.Errorf("eval did not label cm.yaml:\n%s", res.Tree["cm.yaml"])
	}
	if string(res.Tree[".expected/config.yaml"]) != "exitCode: 1\nstdErr: boom\n" {
		t.Errorf("eval changed an ignored file:\n%s", res.Tree[".expected/config.yaml"])
	}
	if _, err := render.RenderTree(ctx, pkg(true), render.RenderOptions{}); err != nil {
		t.Fatalf("render: %v", err)
	}
	_, err = fneval.EvalTree(ctx, pkg(false), fneval.EvalOptions{Image: "set-labels:v0.2", Args: []string{"app=shop"}})
	// kpt's runner refuses the function's input, naming the file
	if err == nil || !strings.Contains(err.Error(), "input resource list must contain only KRM resources: .expected/config.yaml: resource must have `apiVersion`") {
		t.Errorf("eval without .krmignore = %v, want kpt's refusal naming the non-KRM file", err)
	}
}
