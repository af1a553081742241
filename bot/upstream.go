package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/fetch/sources"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/porch"
	"github.com/kptbot/kptbot/variant"
)

// index is the bot's view of every repository it can see and the
// kptbot.yaml of each: the reverse index from an upstream package to the
// variants that follow it. It is a cache, rebuilt at resync and refreshed
// on pushes to default branches; nothing depends on it for correctness.
type index struct {
	mu    sync.Mutex
	built time.Time
	repos []indexed
	// generated are the PackageVariantSets' variants by target
	// repository (forge + "/" + lower-case full name), expanded once per
	// index so a fan-out to N repositories does not expand N times.
	generated map[string][]generatedVariant
	// problems are set expansion errors, by the set's repository.
	problems map[string][]Problem
	// upstreams are the sets' CEL variable upstream (setKey → object),
	// read at each full rebuild.
	upstreams map[string]config.Object
	// rebuild makes concurrent full rebuilds one (see RefreshIndex).
	rebuild sync.Mutex
}

type indexed struct {
	f    forge.Forge
	repo forge.Repo
	cfg  *config.File // nil when the repository has no (valid) kptbot.yaml
}

// indexTTL is how long an index serves before a reconcile rebuilds it in
// full; in between, pushes and installation events update it one
// repository at a time (index.go).
const indexTTL = 30 * time.Minute

func genKey(forgeName, repo string) string { return forgeName + "/" + strings.ToLower(repo) }

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
func expandSets(repos []indexed, upstreams map[string]config.Object) (map[string][]generatedVariant, map[string][]Problem) {
	objs := map[string][]config.Object{}
	for _, ix := range repos {
		if len(ix.repo.Topics) == 0 {
			objs[ix.repo.Forge] = append(objs[ix.repo.Forge], config.Object{Name: ix.repo.FullName})
		}
		for _, t := range ix.repo.Topics {
			objs[ix.repo.Forge] = append(objs[ix.repo.Forge], config.Object{Name: ix.repo.FullName, Labels: map[string]string{topicLabel: t}})
		}
	}
	byKey := map[string]indexed{}
	for _, ix := range repos {
		byKey[genKey(ix.repo.Forge, ix.repo.FullName)] = ix
	}
	gen := map[string][]generatedVariant{}
	probs := map[string][]Problem{}
	for _, ix := range repos {
		if ix.cfg == nil {
			continue
		}
		for _, set := range ix.cfg.Sets {
			up, ok := upstreams[setKey(ix, set)]
			if !ok {
				up = config.Object{Name: set.Spec.Upstream.Package}
			}
			pvs, err := config.Expand(set, config.ExpandInput{Upstream: up, Repositories: objs[ix.repo.Forge]})
			if err != nil {
				probs[ix.repo.FullName] = append(probs[ix.repo.FullName], Problem{Severity: SeverityError, Repo: ix.repo.FullName, File: ix.cfgPath(), Message: err.Error()})
				continue
			}
			refused := map[string]bool{}
			for _, pv := range pvs {
				k := genKey(ix.repo.Forge, pv.Spec.Downstream.Repo)
				gen[k] = append(gen[k], generatedVariant{pv: pv, from: ix.repo})
				if t, ok := byKey[k]; ok && !refused[k] && !accepts(t, ix.repo) {
					refused[k] = true
					probs[ix.repo.FullName] = append(probs[ix.repo.FullName], Problem{Severity: SeverityError, Repo: ix.repo.FullName, File: ix.cfgPath(),
						Message: fmt.Sprintf("PackageVariantSet %s targets %s, which does not accept variants from %s: its own kptbot.yaml must list %s in Repository spec.acceptVariantsFrom", set.Metadata.Name, t.repo.FullName, ix.repo.FullName, ix.repo.FullName)})
				}
			}
		}
	}
	return gen, probs
}

func setKey(ix indexed, set config.PackageVariantSet) string {
	return genKey(ix.repo.Forge, ix.repo.FullName) + "#" + set.Metadata.Name
}

// setUpstreams reads every PackageVariantSet's CEL variable upstream, as
// Porch's upstream package revision: the upstream package's name and its
// Kptfile's labels and annotations at the revision the set follows. Only
// upstreams on the bot's forges that the set's repository may read are
// read; the others (and any failure) give the name alone.
func (b *Bot) setUpstreams(ctx context.Context, repos []indexed) map[string]config.Object {
	out := map[string]config.Object{}
	for _, ix := range repos {
		if ix.cfg == nil {
			continue
		}
		for _, set := range ix.cfg.Sets {
			if obj, ok := b.setUpstream(ctx, repos, ix, set.Spec.Upstream); ok {
				out[setKey(ix, set)] = obj
			}
		}
	}
	return out
}

func (b *Bot) setUpstream(ctx context.Context, repos []indexed, set indexed, up *config.Upstream) (config.Object, bool) {
	i := slices.IndexFunc(repos, func(r indexed) bool { return r.repo.Forge == set.repo.Forge && sameUpstream(up.Repo, r.repo) })
	if i < 0 || repos[i].readableBy(set.repo) != nil {
		return config.Object{}, false
	}
	src := repos[i]
	pkg := strings.Trim(up.Package, "/")
	tags, err := b.listTags(ctx, src.f, src.repo)
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
	snap, err := src.f.ReadTree(ctx, src.repo, tags[tag].SHA, pkg)
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
func accepts(target indexed, from forge.Repo) bool {
	var spec config.RepositorySpec
	if target.cfg != nil && target.cfg.Repository != nil {
		spec = target.cfg.Repository.Spec
	}
	_, ok := acceptedSource(target.repo, spec, from)
	return ok
}

// forgetIndex makes the next reconcile rebuild the index.
func (b *Bot) forgetIndex() {
	b.index.mu.Lock()
	defer b.index.mu.Unlock()
	b.index.repos = nil
}

func (b *Bot) snapshotIndex(ctx context.Context) ([]indexed, error) {
	b.index.mu.Lock()
	fresh := time.Since(b.index.built) < indexTTL && b.index.repos != nil
	repos := b.index.repos
	b.index.mu.Unlock()
	if fresh {
		return repos, nil
	}
	if err := b.RefreshIndex(ctx); err != nil {
		return nil, err
	}
	b.index.mu.Lock()
	defer b.index.mu.Unlock()
	return b.index.repos, nil
}

// topicLabel is the label key PackageVariantSet selectors use for forge
// topics: matchLabels {kptbot.dev/topic: edge} selects repositories with
// the topic "edge".
const topicLabel = "kptbot.dev/topic"

// variantsFor returns the variants that target rc's repository: its own
// PackageVariants, and those generated by the PackageVariantSets the bot
// can see whose targets name or select it, when rc's own default-branch
// kptbot.yaml accepts the set's repository; such a variant's update and
// adoption policies are rc's, never the set's.
func (b *Bot) variantsFor(ctx context.Context, rc *repoCtx) ([]config.PackageVariant, error) {
	var out []config.PackageVariant
	for _, pv := range rc.cfg.Variants {
		if pv.Spec.Downstream.Repo == "" || strings.EqualFold(pv.Spec.Downstream.Repo, rc.repo.FullName) {
			out = append(out, pv)
		}
	}
	if _, err := b.snapshotIndex(ctx); err != nil {
		return nil, err
	}
	b.index.mu.Lock()
	gen := b.index.generated[genKey(rc.repo.Forge, rc.repo.FullName)]
	rc.out.Problems = append(rc.out.Problems, b.index.problems[rc.repo.FullName]...)
	b.index.mu.Unlock()
	var accepted []config.PackageVariant
	for _, g := range gen {
		if src, ok := acceptedSource(rc.repo, rc.spec, g.from); ok {
			accepted = append(accepted, applySource(g.pv, rc.repo, g.from, src))
		}
	}
	if len(accepted) > 0 {
		out = append(out, config.Defaults(&config.File{Repository: rc.cfg.Repository, Variants: dedupe(out, accepted)}).Variants...)
	}
	return out, nil
}

func (ix indexed) cfgPath() string {
	if ix.cfg == nil {
		return ""
	}
	return ix.cfg.Name
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

// followers returns the repositories with a variant following pkg of
// upstream (by owner/name on the same forge, or by clone URL) that may
// read it: one that may not is told so when it reconciles, and is not
// worked on (nor dispatched to) when the upstream publishes.
func (b *Bot) followers(ctx context.Context, upstream forge.Repo, pkg string) ([]forge.Repo, error) {
	repos, err := b.snapshotIndex(ctx)
	if err != nil {
		return nil, err
	}
	up, known := indexed{repo: upstream}, false
	for _, ix := range repos {
		if sameRepo(ix.repo, upstream) {
			up, known = ix, true
		}
	}
	var out []forge.Repo
	for _, ix := range repos {
		if known && up.readableBy(ix.repo) != nil {
			continue
		}
		var o Outcome
		rc := &repoCtx{f: ix.f, repo: ix.repo, cfg: ix.cfg, out: &o}
		if rc.cfg == nil {
			rc.cfg = config.Defaults(&config.File{})
		}
		rc.spec = rc.cfg.Repository.Spec
		vs, err := b.variantsFor(ctx, rc)
		if err != nil {
			return nil, err
		}
		for _, pv := range vs {
			if up := pv.Spec.Upstream; up != nil && sameUpstream(up.Repo, upstream) && strings.Trim(up.Package, "/") == pkg {
				out = append(out, ix.repo)
				break
			}
		}
	}
	return out, nil
}

func sameUpstream(ref string, r forge.Repo) bool {
	key := refKey(ref)
	return key == strings.ToLower(r.FullName) || (r.CloneURL != "" && key == refKey(r.CloneURL))
}

func sameRepo(a, b forge.Repo) bool {
	return strings.EqualFold(a.Forge, b.Forge) && strings.EqualFold(a.FullName, b.FullName)
}

// readableBy applies readableBy to an indexed upstream.
func (ix indexed) readableBy(down forge.Repo) error {
	var spec *config.RepositorySpec
	if ix.cfg != nil && ix.cfg.Repository != nil {
		spec = &ix.cfg.Repository.Spec
	}
	return readableBy(ix.repo, spec, down)
}

// forgeFetcher is the engine's Fetcher for upstreams on the bot's forges
// (owner/name, or a clone URL it knows): content comes through the forge
// adapter (one git fetch with the bot's credentials), versions resolve as
// kpt's do. Anything else goes to the plain git fetcher.
type forgeFetcher struct {
	b     *Bot
	repos []indexed
	// down is the repository the fetched packages are for: only what its
	// readers may read is fetched through the bot's forges.
	down forge.Repo
	// other fetches git URLs, OCI artifacts and HTTP archives.
	other *sources.Client
}

func (b *Bot) fetcher(ctx context.Context, rc *repoCtx) (*forgeFetcher, error) {
	repos, err := b.snapshotIndex(ctx)
	if err != nil {
		return nil, err
	}
	other, err := sources.New(sources.Options{})
	if err != nil {
		return nil, err
	}
	return &forgeFetcher{b: b, repos: append(repos, indexed{f: rc.f, repo: rc.repo}), down: rc.repo, other: other}, nil
}

func (ff *forgeFetcher) lookup(ref string) (indexed, bool) {
	for _, ix := range ff.repos {
		if sameUpstream(ref, ix.repo) {
			return ix, true
		}
	}
	return indexed{}, false
}

// source is lookup for reading: a repository on the bot's forges that
// the downstream may not read is an error, never a fall-through to
// another fetcher.
func (ff *forgeFetcher) source(ref string) (indexed, bool, error) {
	ix, ok := ff.lookup(ref)
	if !ok {
		return ix, false, nil
	}
	if err := ix.readableBy(ff.down); err != nil {
		return ix, true, err
	}
	return ix, true, nil
}

// Fetch implements engine.Fetcher.
func (ff *forgeFetcher) Fetch(ctx context.Context, repo, dir, version string) (map[string][]byte, fetch.Resolved, error) {
	ix, ok, err := ff.source(repo)
	if err != nil {
		return nil, fetch.Resolved{}, err
	}
	if !ok {
		return ff.other.Fetch(ctx, repo, dir, version)
	}
	res, err := ff.resolve(ctx, ix, strings.Trim(dir, "/"), version)
	if err != nil {
		return nil, fetch.Resolved{}, err
	}
	snap, err := ix.f.ReadTree(ctx, ix.repo, res.Commit, strings.Trim(dir, "/"))
	if err != nil {
		return nil, fetch.Resolved{}, err
	}
	if len(snap.Files) == 0 {
		return nil, fetch.Resolved{}, fmt.Errorf("%s has no directory %s at %s", ix.repo.FullName, dir, res.Ref)
	}
	return snap.Files, res, nil
}

// resolve is kpt's rule: the tag <dir>/<version> first, then version as a
// tag, a branch, or a commit.
func (ff *forgeFetcher) resolve(ctx context.Context, ix indexed, dir, version string) (fetch.Resolved, error) {
	if ref, sha, err := ff.tagAmong(ctx, ix, dir+"/"+version, version); err != nil || sha != "" {
		return fetch.Resolved{Ref: ref, Commit: sha}, err
	}
	branches, err := ix.f.ListBranches(ctx, ix.repo)
	if err != nil {
		return fetch.Resolved{}, err
	}
	for _, br := range branches {
		if br.Name == version {
			return fetch.Resolved{Ref: version, Commit: br.SHA}, nil
		}
	}
	if len(version) == 40 {
		return fetch.Resolved{Ref: version, Commit: version}, nil
	}
	return fetch.Resolved{}, fmt.Errorf("%s: no tag %s/%s, tag, branch or commit %q", ix.repo.FullName, dir, version, version)
}

// Latest resolves a variant's revision policy: latest is the highest
// <pkg>/v<N> tag of the upstream; anything else is used as given.
func (ff *forgeFetcher) Latest(ctx context.Context, up *config.Upstream) (string, error) {
	direct := variant.Direct{Client: ff.other}
	if st := locator.Store(up.Repo); st == locator.OCI || st == locator.HTTP {
		return direct.Latest(ctx, up)
	}
	ix, ok, err := ff.source(up.Repo)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return direct.Latest(ctx, up)
	case up.Revision != "" && up.Revision != config.DefaultRevision:
		return up.Revision, nil
	}
	tags, err := ff.b.listTags(ctx, ix.f, ix.repo)
	if err != nil {
		return "", err
	}
	pkg := strings.Trim(up.Package, "/")
	if up.WorkspaceName != "" {
		return ff.workspaceRevision(ctx, ix, pkg, up.WorkspaceName, tags)
	}
	best, i := porch.LatestOf(pkg, tags, func(t forge.Tag) string { return t.Name })
	if i < 0 {
		return "", fmt.Errorf("upstream %s has no published revision of %s (no tag %s/v<N>)", up.Repo, pkg, pkg)
	}
	return porch.RevisionName(best), nil
}

// log lists the upstream's commits between two revisions of a package
// (tags <pkg>/<from> and <pkg>/<to>, or the revisions as given), for the
// update change's description; upstreams off the bot's forges and any
// failure give none: the range is informative, never a reason to stop.
func (ff *forgeFetcher) log(ctx context.Context, up *config.Upstream, from, to string) []forge.Commit {
	ix, ok, err := ff.source(up.Repo)
	if err != nil || !ok || from == "" {
		return nil
	}
	pkg := strings.Trim(up.Package, "/")
	a, errA := ff.resolve(ctx, ix, pkg, from)
	b, errB := ff.resolve(ctx, ix, pkg, to)
	if errA != nil || errB != nil {
		return nil
	}
	commits, err := ix.f.Log(ctx, ix.repo, a.Commit, b.Commit)
	if err != nil {
		return nil
	}
	return commits
}

// workspaceRevision resolves upstream.workspaceName on a forge: the
// published revision whose commit's kpt trailer names the workspace.
func (ff *forgeFetcher) workspaceRevision(ctx context.Context, ix indexed, pkg, ws string, list []forge.Tag) (string, error) {
	tags := make([]variant.Tagged, len(list))
	for i, t := range list {
		tags[i] = variant.Tagged{Name: t.Name, Commit: t.SHA}
	}
	return variant.WorkspaceRevision(pkg, ws, tags, func(sha string) (string, error) {
		commits, err := ix.f.Log(ctx, ix.repo, "", sha)
		if err != nil || len(commits) == 0 {
			return "", errors.Join(err, fmt.Errorf("no commit %s", sha))
		}
		return commits[0].Message, nil
	})
}
