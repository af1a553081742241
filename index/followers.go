package index

import (
	"context"
	"strings"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/trust"
)

// Followers returns the repositories with a variant following pkg of
// upstream (by owner/name on the same forge, or by clone URL, as
// names.go resolves them: a renamed upstream keeps its followers) that may
// read it: one that may not is told so when it reconciles, and is not
// worked on (nor dispatched to) when the upstream publishes.
func (x *Index) Followers(ctx context.Context, upstream forge.Repo, pkg string) ([]forge.Repo, error) {
	repos, bound, err := x.view(ctx)
	if err != nil {
		return nil, err
	}
	src, known := Entry{Repo: upstream}, false
	for _, ix := range repos {
		if sameRepo(ix.Repo, upstream) {
			src, known = ix, true
		}
	}
	if src.Repo.ID == 0 {
		src.Repo.ID = upstream.ID // not indexed yet: the event's id
	}
	var out []forge.Repo
	for _, ix := range repos {
		if known && src.ReadableBy(ix.Repo) != nil {
			continue
		}
		cfg := ix.Cfg
		if cfg == nil {
			cfg = config.Defaults(&config.File{})
		}
		vs, _, err := x.VariantsFor(ctx, ix.Repo, cfg, cfg.Repository.Spec)
		if err != nil {
			return nil, err
		}
		for _, pv := range vs {
			if up := pv.Spec.Upstream; up != nil && bound.refersTo(up.Repo, src.Repo) && strings.Trim(up.Package, "/") == pkg {
				out = append(out, ix.Repo)
				break
			}
		}
	}
	return out, nil
}

// SameUpstream reports whether an upstream reference (owner/name, or a
// clone URL) names r.
func SameUpstream(ref string, r forge.Repo) bool {
	key := trust.RefKey(ref)
	return key == strings.ToLower(r.FullName) || (r.CloneURL != "" && key == trust.RefKey(r.CloneURL))
}

func sameRepo(a, b forge.Repo) bool {
	return strings.EqualFold(a.Forge, b.Forge) && strings.EqualFold(a.FullName, b.FullName)
}

// ReadableBy applies trust.ReadableBy to an indexed upstream.
func (ix Entry) ReadableBy(down forge.Repo) error {
	var spec *config.RepositorySpec
	if ix.Cfg != nil && ix.Cfg.Repository != nil {
		spec = &ix.Cfg.Repository.Spec
	}
	return trust.ReadableBy(ix.Repo, spec, down)
}
