package render

import (
	"context"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"github.com/kptdev/kpt/pkg/fn"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kptbot/kptbot/engine/fnresults"
	"github.com/kptbot/kptbot/engine/internal/kptref"
)

// kpt's renderer, for RenderOptions.KptOnly in this package's tests.
func init() {
	KptRenderer = func(ctx context.Context, fsys filesys.FileSystem, root string, opts RenderOptions) (*fnresults.List, error) {
		prefix := opts.ImagePrefix
		if prefix == "" {
			prefix = DefaultImagePrefix
		}
		rt := Runtime{Runtimes: opts.Runtimes, maxSteps: opts.StarlarkMaxSteps}
		return kptref.Render(ctx, fsys, root, prefix, opts.AllowExec, func(ctx context.Context, f *kptfilev1.Function) (fn.FunctionRunner, error) {
			return rt.GetRunner(ctx, f)
		})
	}
}
