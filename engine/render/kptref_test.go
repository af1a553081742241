package render

import (
	"context"

	fnresult "github.com/kptdev/kpt/pkg/api/fnresult/v1"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kptbot/kptbot/engine/internal/kptref"
)

// kpt's renderer, for RenderOptions.KptOnly in this package's tests.
func init() {
	KptRenderer = func(ctx context.Context, fsys filesys.FileSystem, root string, opts RenderOptions) (*fnresult.ResultList, error) {
		prefix := opts.ImagePrefix
		if prefix == "" {
			prefix = DefaultImagePrefix
		}
		return kptref.Render(ctx, fsys, root, prefix, opts.AllowExec, Runtime{Runtimes: opts.Runtimes, maxSteps: opts.StarlarkMaxSteps})
	}
}
