package index

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/porch"
	"github.com/kptbot/kptbot/trust"
)

// generatedVariant is a variant a PackageVariantSet generated, and the
// repository whose kptbot.yaml holds the set.
type generatedVariant struct {
	pv   config.PackageVariant
	from forge.Repo
}

// expandSets expands every PackageVariantSet over the repositories of its
// forge: explicit targets by name, selectors over topics. A target that
// does not accept the set's repository is reported to the set's
// repository (variantsFor is what refuses it).
func expandSets(repos []Entry, upstreams map[string]config.Object) (map[string][]generatedVariant, map[string][]Problem) {
	objs := map[string][]config.Object{}
	for _, ix := range repos {
		if len(ix.Repo.Topics) == 0 {
			objs[ix.Repo.Forge] = append(objs[ix.Repo.Forge], config.Object{Name: ix.Repo.FullName})
		}
		for _, t := range ix.Repo.Topics {
			objs[ix.Repo.Forge] = append(objs[ix.Repo.Forge], config.Object{Name: ix.Repo.FullName, Labels: map[string]string{topicLabel: t}})
		}
	}
	byKey := map[string]Entry{}
	for _, ix := range repos {
		byKey[genKey(ix.Repo.Forge, ix.Repo.FullName)] = ix
	}
	gen := map[string][]generatedVariant{}
	probs := map[string][]Problem{}
	for _, ix := range repos {
		if ix.Cfg == nil {
			continue
		}
		for _, set := range ix.Cfg.Sets {
			up, ok := upstreams[setKey(ix, set)]
			if !ok {
				up = config.Object{Name: set.Spec.Upstream.Package}
			}
			pvs, err := config.Expand(set, config.ExpandInput{Upstream: up, Repositories: objs[ix.Repo.Forge]})
			if err != nil {
				probs[ix.Repo.FullName] = append(probs[ix.Repo.FullName], Problem{Repo: ix.Repo.FullName, File: ix.cfgPath(), Message: err.Error()})
				continue
			}
			refused := map[string]bool{}
			for _, pv := range pvs {
				k := genKey(ix.Repo.Forge, pv.Spec.Downstream.Repo)
				gen[k] = append(gen[k], generatedVariant{pv: pv, from: ix.Repo})
				if t, ok := byKey[k]; ok && !refused[k] && !accepts(t, ix.Repo) {
					refused[k] = true
					probs[ix.Repo.FullName] = append(probs[ix.Repo.FullName], Problem{Repo: ix.Repo.FullName, File: ix.cfgPath(),
						Message: fmt.Sprintf("PackageVariantSet %s targets %s, which does not accept variants from %s: its own kptbot.yaml must list %s in Repository spec.acceptVariantsFrom", set.Metadata.Name, t.Repo.FullName, ix.Repo.FullName, ix.Repo.FullName)})
				}
			}
		}
	}
	return gen, probs
}

func setKey(ix Entry, set config.PackageVariantSet) string {
	return genKey(ix.Repo.Forge, ix.Repo.FullName) + "#" + set.Metadata.Name
}

// setUpstreams reads every PackageVariantSet's CEL variable upstream, as
// Porch's upstream package revision: the upstream package's name and its
// Kptfile's labels and annotations at the revision the set follows. Only
// upstreams on the bot's forges that the set's repository may read are
// read; the others (and any failure) give the name alone.
func (x *Index) setUpstreams(ctx context.Context, repos []Entry, bound bindings) map[string]config.Object {
	out := map[string]config.Object{}
	for _, ix := range repos {
		if ix.Cfg == nil {
			continue
		}
		for _, set := range ix.Cfg.Sets {
			if obj, ok := x.setUpstream(ctx, repos, bound, ix, set.Spec.Upstream); ok {
				out[setKey(ix, set)] = obj
			}
		}
	}
	return out
}

func (x *Index) setUpstream(ctx context.Context, repos []Entry, bound bindings, set Entry, up *config.Upstream) (config.Object, bool) {
	i := slices.IndexFunc(repos, func(r Entry) bool { return r.Repo.Forge == set.Repo.Forge && bound.refersTo(up.Repo, r.Repo) })
	if i < 0 || repos[i].ReadableBy(set.Repo) != nil {
		return config.Object{}, false
	}
	src := repos[i]
	pkg := strings.Trim(up.Package, "/")
	tags, err := x.ListTags(ctx, src.F, src.Repo)
	if err != nil {
		return config.Object{}, false
	}
	tag := -1
	if up.Revision == "" || up.Revision == config.DefaultRevision {
		_, tag = porch.LatestOf(pkg, tags, func(t forge.Tag) string { return t.Name })
	} else {
		tag = slices.IndexFunc(tags, func(t forge.Tag) bool { return t.Name == pkg+"/"+up.Revision || t.Name == up.Revision })
	}
	if tag < 0 {
		return config.Object{}, false
	}
	snap, err := src.F.ReadTree(ctx, src.Repo, tags[tag].SHA, pkg)
	if err != nil {
		return config.Object{}, false
	}
	kf, err := kptpkg.DecodeKptfile(pkg+"/"+kptpkg.KptfileName, snap.Files[kptpkg.KptfileName])
	if err != nil {
		return config.Object{}, false
	}
	return config.Object{Name: up.Package, Labels: kf.Labels, Annotations: kf.Annotations}, true
}

// accepts reports whether the indexed target's configuration accepts
// variants from a set in repository from.
func accepts(target Entry, from forge.Repo) bool {
	var spec config.RepositorySpec
	if target.Cfg != nil && target.Cfg.Repository != nil {
		spec = target.Cfg.Repository.Spec
	}
	_, ok := trust.AcceptedSource(target.Repo, spec, from)
	return ok
}

// topicLabel is the label key PackageVariantSet selectors use for forge
// topics: matchLabels {kptbot.dev/topic: edge} selects repositories with
// the topic "edge".
const topicLabel = "kptbot.dev/topic"

// VariantsFor returns the variants that target repo (whose default-branch
// kptbot.yaml is cfg, with spec its Repository spec): its own
// PackageVariants, and those generated by the PackageVariantSets the bot
// can see whose targets name or select it, when repo's own kptbot.yaml
// accepts the set's repository; such a variant's update and adoption
// policies are repo's, never the set's. The problems are those of the
// sets in repo.
func (x *Index) VariantsFor(ctx context.Context, repo forge.Repo, cfg *config.File, spec config.RepositorySpec) ([]config.PackageVariant, []Problem, error) {
	var out []config.PackageVariant
	for _, pv := range cfg.Variants {
		if pv.Spec.Downstream.Repo == "" || strings.EqualFold(pv.Spec.Downstream.Repo, repo.FullName) {
			out = append(out, pv)
		}
	}
	if _, err := x.Snapshot(ctx); err != nil {
		return nil, nil, err
	}
	x.mu.Lock()
	gen := x.generated[genKey(repo.Forge, repo.FullName)]
	probs := x.problems[repo.FullName]
	x.mu.Unlock()
	var accepted []config.PackageVariant
	for _, g := range gen {
		if src, ok := trust.AcceptedSource(repo, spec, g.from); ok {
			accepted = append(accepted, trust.ApplySource(g.pv, repo, g.from, src))
		}
	}
	if len(accepted) > 0 {
		out = append(out, config.Defaults(&config.File{Repository: cfg.Repository, Variants: dedupe(out, accepted)}).Variants...)
	}
	return out, probs, nil
}

func (ix Entry) cfgPath() string {
	if ix.Cfg == nil {
		return ""
	}
	return ix.Cfg.Name
}

// dedupe drops generated variants whose name an earlier one already has.
func dedupe(have, add []config.PackageVariant) []config.PackageVariant {
	seen := map[string]bool{}
	for _, pv := range have {
		seen[pv.Metadata.Name] = true
	}
	var out []config.PackageVariant
	for _, pv := range add {
		if !seen[pv.Metadata.Name] {
			seen[pv.Metadata.Name] = true
			out = append(out, pv)
		}
	}
	return out
}
