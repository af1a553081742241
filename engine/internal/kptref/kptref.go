// Package kptref renders with kpt's own renderer (kptops), for tests that
// hold kptbot's hydrator to it. Only tests import it: kptops links
// client-go and kubectl, which the kptbot binary must not
// (TestBinaryLinksNoKubernetesClient).
package kptref

import (
	"context"

	fnresult "github.com/kptdev/kpt/pkg/api/fnresult/v1"
	"github.com/kptdev/kpt/pkg/fn"
	"github.com/kptdev/kpt/pkg/lib/kptops"
	"github.com/kptdev/kpt/pkg/lib/runneroptions"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Render renders the package at root of fsys in place with kpt's
// renderer: images without a registry get prefix, exec functions run when
// allowExec, and runtime picks each function's runner.
func Render(ctx context.Context, fsys filesys.FileSystem, root, prefix string, allowExec bool, runtime fn.FunctionRuntime) (*fnresult.ResultList, error) {
	ro := runneroptions.RunnerOptions{}
	ro.InitDefaults(prefix)
	ro.AllowExec = allowExec
	return kptops.NewRenderer(ro).Render(ctx, fsys, fn.RenderOptions{PkgPath: root, Runtime: runtime})
}
