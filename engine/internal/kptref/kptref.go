// Package kptref renders with kpt's own renderer (kptops), for tests that
// hold kptbot's hydrator to it. Only tests import it: kptops links
// client-go and kubectl, which the kptbot binary must not
// (TestBinaryLinksNoKubernetesClient).
package kptref

import (
	"context"

	fnresult "github.com/kptdev/kpt/pkg/api/fnresult/v1"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"github.com/kptdev/kpt/pkg/fn"
	"github.com/kptdev/kpt/pkg/lib/kptops"
	"github.com/kptdev/kpt/pkg/lib/runneroptions"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kptbot/kptbot/engine/fnresults"
)

// RuntimeFunc is kpt's fn.FunctionRuntime as a function (the render
// package's Runtime.GetRunner, whose runner type is kptbot's own).
type RuntimeFunc func(ctx context.Context, f *kptfilev1.Function) (fn.FunctionRunner, error)

// GetRunner implements kpt's fn.FunctionRuntime.
func (r RuntimeFunc) GetRunner(ctx context.Context, f *kptfilev1.Function) (fn.FunctionRunner, error) {
	return r(ctx, f)
}

// Render renders the package at root of fsys in place with kpt's
// renderer: images without a registry get prefix, exec functions run when
// allowExec, and runtime picks each function's runner. The results are
// kpt's, copied field for field into kptbot's types.
func Render(ctx context.Context, fsys filesys.FileSystem, root, prefix string, allowExec bool, runtime RuntimeFunc) (*fnresults.List, error) {
	ro := runneroptions.RunnerOptions{}
	ro.InitDefaults(prefix)
	ro.AllowExec = allowExec
	rl, err := kptops.NewRenderer(ro).Render(ctx, fsys, fn.RenderOptions{PkgPath: root, Runtime: runtime})
	return FromKpt(rl), err
}

// FromKpt is kpt's result list as kptbot's: nil for nil.
func FromKpt(rl *fnresult.ResultList) *fnresults.List {
	if rl == nil {
		return nil
	}
	out := &fnresults.List{ResourceMeta: rl.ResourceMeta, ExitCode: rl.ExitCode}
	if rl.Items != nil {
		out.Items = make([]fnresults.Result, 0, len(rl.Items))
	}
	for _, r := range rl.Items {
		res := fnresults.Result{Image: r.Image, ExecPath: r.ExecPath, Stderr: r.Stderr, ExitCode: r.ExitCode}
		if r.Results != nil {
			res.Results = make([]*fnresults.Item, 0, len(r.Results))
		}
		for _, it := range r.Results {
			if it == nil {
				res.Results = append(res.Results, nil)
				continue
			}
			item := &fnresults.Item{Message: it.Message, Severity: fnresults.Severity(it.Severity), ResourceRef: it.ResourceRef, Tags: it.Tags}
			if it.Field != nil {
				item.Field = &fnresults.Field{Path: it.Field.Path, CurrentValue: it.Field.CurrentValue, ProposedValue: it.Field.ProposedValue}
			}
			if it.File != nil {
				item.File = &fnresults.File{Path: it.File.Path, Index: it.File.Index}
			}
			res.Results = append(res.Results, item)
		}
		out.Items = append(out.Items, res)
	}
	return out
}
