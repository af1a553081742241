package index

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
	"github.com/kptbot/kptbot/trust"
	"github.com/kptbot/kptbot/variant"
)

// Options configures an Index.
type Options struct {
	// Forges are the forges whose repositories are indexed, by name.
	Forges map[string]forge.Resolver
	// Read is one repository's entry: its forge (forge.Unavailable when
	// it cannot be resolved, kept so the failure shows where the
	// repository is used) and its default branch's kptbot.yaml (nil when
	// it has none or an invalid one).
	Read func(ctx context.Context, r forge.Repo) Entry
}

// Index is the bot's view of every repository it can see and the
// kptbot.yaml of each: the reverse index from an upstream package to the
// variants that follow it. It is a cache, rebuilt at resync and refreshed
// on pushes to default branches; nothing depends on it for correctness.
type Index struct {
	opts  Options
	mu    sync.Mutex
	built time.Time
	repos []Entry
	// generated are the PackageVariantSets' variants by target
	// repository (forge + "/" + lower-case full name), expanded once per
	// index so a fan-out to N repositories does not expand N times.
	generated map[string][]generatedVariant
	// problems are set expansion errors, by the set's repository.
	problems map[string][]Problem
	// upstreams are the sets' CEL variable upstream (setKey → object),
	// read at each full rebuild.
	upstreams map[string]config.Object
	// rebuild makes concurrent full rebuilds one (see Refresh).
	rebuild sync.Mutex
	// tags: see index.go.
	tags tagCache
}

// New returns an empty Index: the first Snapshot builds it.
func New(opts Options) *Index { return &Index{opts: opts} }

// Entry is one indexed repository.
type Entry struct {
	F    forge.Forge
	Repo forge.Repo
	Cfg  *config.File // nil when the repository has no (valid) kptbot.yaml
}

// Problem is a set expansion error (always an error), reported to the
// set's repository.
type Problem struct {
	Repo    string
	File    string
	Message string
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
func (x *Index) setUpstreams(ctx context.Context, repos []Entry) map[string]config.Object {
	out := map[string]config.Object{}
	for _, ix := range repos {
		if ix.Cfg == nil {
			continue
		}
		for _, set := range ix.Cfg.Sets {
			if obj, ok := x.setUpstream(ctx, repos, ix, set.Spec.Upstream); ok {
				out[setKey(ix, set)] = obj
			}
		}
	}
	return out
}

func (x *Index) setUpstream(ctx context.Context, repos []Entry, set Entry, up *config.Upstream) (config.Object, bool) {
	i := slices.IndexFunc(repos, func(r Entry) bool { return r.Repo.Forge == set.Repo.Forge && SameUpstream(up.Repo, r.Repo) })
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

// Forget makes the next reconcile rebuild the index.
func (x *Index) Forget() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.repos = nil
}

// Snapshot is every indexed repository, rebuilt first when older than
// indexTTL; the slice is never changed afterwards.
func (x *Index) Snapshot(ctx context.Context) ([]Entry, error) {
	x.mu.Lock()
	fresh := time.Since(x.built) < indexTTL && x.repos != nil
	repos := x.repos
	x.mu.Unlock()
	if fresh {
		return repos, nil
	}
	if err := x.Refresh(ctx); err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.repos, nil
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

// Followers returns the repositories with a variant following pkg of
// upstream (by owner/name on the same forge, or by clone URL) that may
// read it: one that may not is told so when it reconciles, and is not
// worked on (nor dispatched to) when the upstream publishes.
func (x *Index) Followers(ctx context.Context, upstream forge.Repo, pkg string) ([]forge.Repo, error) {
	repos, err := x.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	up, known := Entry{Repo: upstream}, false
	for _, ix := range repos {
		if sameRepo(ix.Repo, upstream) {
			up, known = ix, true
		}
	}
	var out []forge.Repo
	for _, ix := range repos {
		if known && up.ReadableBy(ix.Repo) != nil {
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
			if up := pv.Spec.Upstream; up != nil && SameUpstream(up.Repo, upstream) && strings.Trim(up.Package, "/") == pkg {
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

// Fetcher is the engine's Fetcher for upstreams on the bot's forges
// (owner/name, or a clone URL it knows): content comes through the forge
// adapter (one git fetch with the bot's credentials), versions resolve as
// kpt's do. Anything else goes to the plain git fetcher.
type Fetcher struct {
	x     *Index
	repos []Entry
	// down is the repository the fetched packages are for: only what its
	// readers may read is fetched through the bot's forges.
	down forge.Repo
	// other fetches git URLs, OCI artifacts and HTTP archives.
	other *sources.Client
}

// Fetcher is the Fetcher for the packages of down (on forge f): the
// indexed repositories and down itself.
func (x *Index) Fetcher(ctx context.Context, f forge.Forge, down forge.Repo) (*Fetcher, error) {
	repos, err := x.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	other, err := sources.New(sources.Options{})
	if err != nil {
		return nil, err
	}
	return &Fetcher{x: x, repos: append(repos, Entry{F: f, Repo: down}), down: down, other: other}, nil
}

// Lookup is the repository on the bot's forges an upstream reference
// names.
func (ff *Fetcher) Lookup(ref string) (Entry, bool) {
	for _, ix := range ff.repos {
		if SameUpstream(ref, ix.Repo) {
			return ix, true
		}
	}
	return Entry{}, false
}

// source is lookup for reading: a repository on the bot's forges that
// the downstream may not read is an error, never a fall-through to
// another fetcher.
func (ff *Fetcher) source(ref string) (Entry, bool, error) {
	ix, ok := ff.Lookup(ref)
	if !ok {
		return ix, false, nil
	}
	if err := ix.ReadableBy(ff.down); err != nil {
		return ix, true, err
	}
	return ix, true, nil
}

// Fetch implements engine.Fetcher.
func (ff *Fetcher) Fetch(ctx context.Context, repo, dir, version string) (map[string][]byte, fetch.Resolved, error) {
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
	snap, err := ix.F.ReadTree(ctx, ix.Repo, res.Commit, strings.Trim(dir, "/"))
	if err != nil {
		return nil, fetch.Resolved{}, err
	}
	if len(snap.Files) == 0 {
		return nil, fetch.Resolved{}, fmt.Errorf("%s has no directory %s at %s", ix.Repo.FullName, dir, res.Ref)
	}
	return snap.Files, res, nil
}

// resolve is kpt's rule: the tag <dir>/<version> first, then version as a
// tag, a branch, or a commit.
func (ff *Fetcher) resolve(ctx context.Context, ix Entry, dir, version string) (fetch.Resolved, error) {
	if ref, sha, err := ff.tagAmong(ctx, ix, dir+"/"+version, version); err != nil || sha != "" {
		return fetch.Resolved{Ref: ref, Commit: sha}, err
	}
	branches, err := ix.F.ListBranches(ctx, ix.Repo)
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
	return fetch.Resolved{}, fmt.Errorf("%s: no tag %s/%s, tag, branch or commit %q", ix.Repo.FullName, dir, version, version)
}

// Latest resolves a variant's revision policy: latest is the highest
// <pkg>/v<N> tag of the upstream; anything else is used as given.
func (ff *Fetcher) Latest(ctx context.Context, up *config.Upstream) (string, error) {
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
	tags, err := ff.x.ListTags(ctx, ix.F, ix.Repo)
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

// Log lists the upstream's commits between two revisions of a package
// (tags <pkg>/<from> and <pkg>/<to>, or the revisions as given), for the
// update change's description; upstreams off the bot's forges and any
// failure give none: the range is informative, never a reason to stop.
func (ff *Fetcher) Log(ctx context.Context, up *config.Upstream, from, to string) []forge.Commit {
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
	commits, err := ix.F.Log(ctx, ix.Repo, a.Commit, b.Commit)
	if err != nil {
		return nil
	}
	return commits
}

// workspaceRevision resolves upstream.workspaceName on a forge: the
// published revision whose commit's kpt trailer names the workspace.
func (ff *Fetcher) workspaceRevision(ctx context.Context, ix Entry, pkg, ws string, list []forge.Tag) (string, error) {
	tags := make([]variant.Tagged, len(list))
	for i, t := range list {
		tags[i] = variant.Tagged{Name: t.Name, Commit: t.SHA}
	}
	return variant.WorkspaceRevision(pkg, ws, tags, func(sha string) (string, error) {
		commits, err := ix.F.Log(ctx, ix.Repo, "", sha)
		if err != nil || len(commits) == 0 {
			return "", errors.Join(err, fmt.Errorf("no commit %s", sha))
		}
		return commits[0].Message, nil
	})
}
