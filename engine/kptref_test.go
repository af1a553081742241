package engine

import (
	"context"

	fnresult "github.com/kptdev/kpt/pkg/api/fnresult/v1"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kptbot/kptbot/engine/internal/kptref"
	"github.com/kptbot/kptbot/engine/render"
)

// kpt's renderer, for render.RenderOptions.KptOnly in this package's tests.
func init() {
	render.KptRenderer = func(ctx context.Context, fsys filesys.FileSystem, root string, opts render.RenderOptions) (*fnresult.ResultList, error) {
		prefix := opts.ImagePrefix
		if prefix == "" {
			prefix = render.DefaultImagePrefix
		}
		return kptref.Render(ctx, fsys, root, prefix, opts.AllowExec, render.Runtime{Runtimes: opts.Runtimes})
	}
}
