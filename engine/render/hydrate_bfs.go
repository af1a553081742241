package render

import (
	"context"
	"fmt"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// hydrateBFS is kpt's top-down hydration (the root's
// kpt.dev/bfs-rendering annotation): packages found breadth first (each
// validated as it is read, its own resources loaded), then each package's
// pipeline, in that order, over its own resources and its descendants'
// as they are now, so a package can change its subpackages but not its
// parent or siblings. After each pipeline its output goes back to the
// packages the resources belong to (a package none of whose resources
// came back keeps what it had, as in kpt).
func (h *hydrator) hydrateBFS(ctx context.Context, pkgs map[string]*kptfilev1.KptFile) ([]*yaml.RNode, error) {
	order := []string{"."}
	children := map[string][]string{}
	res := map[string][]*yaml.RNode{}
	for i := 0; i < len(order); i++ {
		dir := order[i]
		local, err := h.readLocal(dir)
		if err != nil {
			return nil, err
		}
		res[dir] = local
		for _, sub := range subpackagesOf(dir, pkgs) {
			if err := h.validateKptfile(sub, pkgs[sub]); err != nil {
				return nil, fmt.Errorf("pkg %s: pkg.read: %w", "./"+sub, err)
			}
			children[dir] = append(children[dir], sub)
			order = append(order, sub)
		}
	}
	for _, dir := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		input := append([]*yaml.RNode{}, res[dir]...)
		var descend func(d string)
		descend = func(d string) {
			for _, c := range children[d] {
				input = append(input, res[c]...)
				descend(c)
			}
		}
		descend(dir)
		out, err := h.runPipeline(ctx, dir, pkgs[dir], input)
		if err != nil {
			return nil, err
		}
		byPkg := map[string][]*yaml.RNode{}
		for _, r := range out {
			p := kptpkg.Annotation(r, PkgPathAnnotation)
			if p == "" {
				p = h.abs(dir)
			}
			byPkg[p] = append(byPkg[p], r)
		}
		res[dir] = nil
		for _, d := range order {
			if rs, ok := byPkg[h.abs(d)]; ok {
				res[d] = rs
			}
		}
	}
	var all []*yaml.RNode
	for _, dir := range order {
		all = append(all, res[dir]...)
	}
	return all, nil
}
