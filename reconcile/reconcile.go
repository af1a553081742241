// Package reconcile converges a repository's package variants, as Porch's
// PackageVariant controller does, on a plain git repository: it reads
// kptbot.yaml from the registered branch, compares each variant's desired
// package with what is published and drafted, and opens or updates one
// draft per variant. It is level-triggered and idempotent: a second run
// right after the first does nothing.
package reconcile

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/fetch/sources"
	"github.com/kptbot/kptbot/forge/gitrepo"
	"github.com/kptbot/kptbot/porch"
	"github.com/kptbot/kptbot/variant"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Annotations kptbot keeps on a downstream Kptfile: the variant that owns
// the package, and that variant's deletionPolicy (remembered because the
// policy must still apply after the variant is removed from kptbot.yaml).
const (
	OwnerAnnotation          = porch.OwnerAnnotation
	DeletionPolicyAnnotation = porch.DeletionPolicyAnnotation
)

// Action is one step of a plan.
type Action struct {
	Variant string `json:"variant"`
	Package string `json:"package"`
	// Kind is create-draft, update-draft, propose-delete, none or skip.
	Kind string `json:"kind"`
	// Why says what led to it.
	Why string `json:"why"`
	// Workspace is the draft's workspace, for draft actions.
	Workspace string `json:"workspace,omitempty"`
	// Blocking lists required injections without a source: the draft is
	// written but must not be proposed.
	Blocking []string `json:"blocking,omitempty"`

	files engine.Tree
	// task is the Porch task the draft's commit records: clone for a new
	// package, upgrade for a new upstream revision, edit for mutations.
	task porch.Task
}

// Options configures Run.
type Options struct {
	// DryRun computes the plan without writing.
	DryRun bool
	// ConfigPaths are where kptbot.yaml may be (default: kptbot.yaml,
	// .github/kptbot.yaml, .gitlab/kptbot.yaml).
	ConfigPaths []string
	// Sources fetches upstreams: git, OCI registries, HTTP archives
	// (default: sources.New with the environment's settings).
	Sources *sources.Client
}

// Run reconciles every PackageVariant of the repository behind store and
// returns the plan it carried out (or, with DryRun, would carry out).
func Run(ctx context.Context, store *gitrepo.Store, branch string, opts Options) ([]Action, error) {
	src := opts.Sources
	if src == nil {
		var err error
		if src, err = sources.New(sources.Options{}); err != nil {
			return nil, err
		}
	}
	r := &reconciler{store: store, branch: branch, fetcher: src.Git, upstreams: src}
	if err := r.load(ctx, opts); err != nil {
		return nil, err
	}
	variants, err := r.variants()
	if err != nil {
		return nil, err
	}
	var plan []Action
	names := map[string]bool{}
	for _, pv := range variants {
		names[pv.Metadata.Name] = true
		a, err := r.plan(ctx, pv)
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", pv.Metadata.Name, err)
		}
		plan = append(plan, a)
	}
	plan = append(plan, r.orphans(names)...)
	if opts.DryRun {
		return plan, nil
	}
	for i := range plan {
		if err := r.apply(ctx, &plan[i]); err != nil {
			return plan, fmt.Errorf("variant %s: %s: %w", plan[i].Variant, plan[i].Kind, err)
		}
	}
	return plan, nil
}

type reconciler struct {
	store   *gitrepo.Store
	branch  string
	fetcher *fetch.Client
	// upstreams fetches from git, OCI and HTTP archives.
	upstreams *sources.Client
	cfg       *config.File
	tip       string // registered branch commit
	refs      []fetch.GitRef
	sources   []*yaml.RNode
	// packages is what each downstream package looks like now.
	packages map[string]*downstream
}

// downstream is a package's published and drafted state.
type downstream struct {
	latest       int
	latestCommit string
	drafts       []gitrepo.PackageRevision // drafts and proposals
	tags         []fetch.GitRef            // published revisions
}

func (r *reconciler) load(ctx context.Context, opts Options) error {
	repo := r.store.Repo()
	refs, err := repo.Refs()
	if err != nil {
		return err
	}
	r.refs = refs
	for _, ref := range refs {
		if ref.Name == "refs/heads/"+r.branch {
			r.tip = ref.Commit
		}
	}
	if r.tip == "" {
		return fmt.Errorf("the repository has no branch %q", r.branch)
	}
	paths := opts.ConfigPaths
	if len(paths) == 0 {
		paths = config.Locations()
	}
	root, err := repo.Tree(ctx, r.tip, "/")
	if err != nil {
		return err
	}
	for _, p := range paths {
		if b, ok := root[p]; ok {
			f, err := config.Parse(p, b)
			if err != nil {
				return err
			}
			r.cfg = config.Defaults(f)
			break
		}
	}
	if r.cfg == nil {
		return fmt.Errorf("no kptbot.yaml on branch %s (looked for %v)", r.branch, paths)
	}
	if r.sources, err = variant.InjectionSources(root, r.cfg.Repository.Spec.InjectionSources); err != nil {
		return err
	}
	r.packages = map[string]*downstream{}
	for _, ref := range refs {
		info, ok := porch.ParseRef(ref.Name)
		if !ok {
			continue
		}
		d := r.packages[info.Package]
		if d == nil {
			d = &downstream{}
			r.packages[info.Package] = d
		}
		switch info.Lifecycle {
		case porch.Published:
			d.tags = append(d.tags, ref)
		case porch.Draft, porch.Proposed:
			d.drafts = append(d.drafts, gitrepo.PackageRevision{RefInfo: info, Ref: ref.Name, Commit: ref.Commit})
		}
	}
	for pkg, d := range r.packages {
		if n, i := porch.LatestOf(pkg, d.tags, func(r fetch.GitRef) string { return r.Name }); i >= 0 {
			d.latest, d.latestCommit = n, d.tags[i].Commit
		}
	}
	return nil
}

// variants are the repository's PackageVariants plus those its
// PackageVariantSets generate for this repository (a set's targets name
// the repository by its Repository metadata.name, or select it by its
// metadata.labels).
func (r *reconciler) variants() ([]config.PackageVariant, error) {
	out := append([]config.PackageVariant(nil), r.cfg.Variants...)
	self := config.Object{Name: r.cfg.Repository.Metadata.Name, Labels: r.cfg.Repository.Metadata.Labels}
	for _, set := range r.cfg.Sets {
		generated, err := config.Expand(set, config.ExpandInput{
			Upstream:     config.Object{Name: set.Spec.Upstream.Package},
			Repositories: []config.Object{self},
		})
		if err != nil {
			return nil, err
		}
		var mine []config.PackageVariant
		for _, pv := range generated {
			if pv.Spec.Downstream.Repo == self.Name {
				mine = append(mine, pv)
			}
		}
		out = append(out, config.Defaults(&config.File{Repository: r.cfg.Repository, Variants: mine}).Variants...)
	}
	return out, nil
}

// upstreamRevision resolves a variant's upstream revision: latest is the
// highest <package>/v<N> tag of a git upstream, the highest version tag of
// an OCI package, the highest of the versions to try that exists for an
// archive URL template (a fixed archive URL has no revisions: ""); anything
// else is used as given.
func (r *reconciler) upstreamRevision(ctx context.Context, up *config.Upstream) (string, error) {
	if up.Revision != "" && up.Revision != config.DefaultRevision {
		return up.Revision, nil
	}
	switch locator.Store(up.Repo) {
	case locator.OCI:
		return r.upstreams.Latest(ctx, up.Repo, "/"+strings.Trim(up.Package, "/"), nil)
	case locator.HTTP:
		if !locator.IsTemplate(up.Repo) {
			return "", nil
		}
		return r.upstreams.Latest(ctx, up.Repo, "/"+strings.Trim(up.Package, "/"), up.Versions)
	}
	repo, err := r.fetcher.Repo(ctx, up.Repo)
	if err != nil {
		return "", err
	}
	refs, err := repo.Refs()
	if err != nil {
		return "", err
	}
	best, i := porch.LatestOf(strings.Trim(up.Package, "/"), refs, func(r fetch.GitRef) string { return r.Name })
	if i < 0 {
		return "", fmt.Errorf("upstream %s has no published revision of %s (no tag %s/v<N>)", up.Repo, up.Package, up.Package)
	}
	return porch.RevisionName(best), nil
}

func (r *reconciler) files(ctx context.Context, commit, pkg string) (engine.Tree, error) {
	f, err := r.store.Repo().Tree(ctx, commit, "/"+pkg)
	return engine.Tree(f), err
}

func owner(files engine.Tree) string { return annotationOf(files, OwnerAnnotation) }

func annotationOf(files engine.Tree, key string) string {
	kf, err := engine.DecodeKptfile(engine.KptfileName, files[engine.KptfileName])
	if err != nil {
		return ""
	}
	return kf.Annotations[key]
}

// plan decides what one variant needs.
func (r *reconciler) plan(ctx context.Context, pv config.PackageVariant) (Action, error) {
	pkg := strings.Trim(pv.Spec.Downstream.Package, "/")
	a := Action{Variant: pv.Metadata.Name, Package: pkg}
	if pv.Spec.Paused {
		a.Kind, a.Why = "skip", "paused"
		return a, nil
	}
	rev, err := r.upstreamRevision(ctx, pv.Spec.Upstream)
	if err != nil {
		return a, err
	}
	d := r.packages[pkg]
	if d == nil {
		d = &downstream{}
	}
	var published engine.Tree
	if d.latest > 0 {
		if published, err = r.files(ctx, d.latestCommit, pkg); err != nil {
			return a, err
		}
		if o := owner(published); o != pv.Metadata.Name && pv.Spec.AdoptionPolicy != "adoptExisting" {
			a.Kind = "skip"
			a.Why = fmt.Sprintf("%s exists and is not owned by this variant (owner %q); adoptionPolicy is adoptNone", porch.Tag(pkg, d.latest), o)
			return a, nil
		}
	}
	desired, why, task, err := r.desired(ctx, pv, pkg, rev, published, porch.Tag(pkg, d.latest))
	if err != nil {
		return a, err
	}
	a.task = task
	res, err := variant.Apply(desired, pv, r.sources)
	if err != nil {
		return a, err
	}
	a.Blocking = res.Blocking
	out, err := engine.RenderTree(ctx, res.Tree, engine.RenderOptions{})
	if err != nil {
		return a, fmt.Errorf("rendering the variant: %w", err)
	}
	a.files = out.Tree
	if published != nil && published.Equal(a.files) {
		a.Kind, a.Why = "none", fmt.Sprintf("%s is up to date with %s@%s", porch.Tag(pkg, d.latest), pv.Spec.Upstream.Package, rev)
		return a, nil
	}
	// One open draft per variant: update it rather than opening another.
	for _, dr := range d.drafts {
		files, err := r.files(ctx, dr.Commit, pkg)
		if err != nil {
			return a, err
		}
		if owner(files) != pv.Metadata.Name {
			continue
		}
		a.Workspace = dr.Workspace
		switch {
		case files.Equal(a.files):
			a.Kind, a.Why = "none", fmt.Sprintf("draft %s/%s already holds the desired package", pkg, dr.Workspace)
		case dr.Lifecycle == porch.Proposed:
			a.Kind, a.Why = "skip", fmt.Sprintf("%s/%s is proposed; approve or reject it before the variant changes it (%s)", pkg, dr.Workspace, why)
		default:
			edited, err := r.editedByOthers(dr.Commit)
			if err != nil {
				return a, err
			}
			if edited != "" {
				a.Kind, a.Why = "skip", fmt.Sprintf("draft %s/%s has commits by %s: left alone; delete the draft (kptbot rpkg del) to let the variant recreate it", pkg, dr.Workspace, edited)
			} else {
				a.Kind, a.Why = "update-draft", why
			}
		}
		return a, nil
	}
	a.Kind, a.Why = "create-draft", why
	a.Workspace = r.workspace(pv.Metadata.Name, rev, pkg)
	return a, nil
}

// desired is the package before the variant's mutations: the upstream
// cloned (first time) or the published package (revision local) merged
// with the upstream revision (3-way, local edits kept); task is what Porch
// records for it.
func (r *reconciler) desired(ctx context.Context, pv config.PackageVariant, pkg, rev string, published engine.Tree, local string) (_ engine.Tree, why string, task porch.Task, _ error) {
	tmp, err := os.MkdirTemp("", "kptbot-reconcile-")
	if err != nil {
		return nil, "", task, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, path.Base(pkg))
	up := pv.Spec.Upstream
	if published == nil {
		res, err := engine.Get(ctx, r.upstreams, dir, engine.GetOptions{Repo: up.Repo, Dir: "/" + strings.Trim(up.Package, "/"), Version: rev, ForDeployment: r.cfg.Repository.Spec.Deployment})
		if err != nil {
			return nil, "", task, err
		}
		files, err := engine.ReadTree(dir)
		if err != nil {
			return nil, "", task, err
		}
		task = porch.VariantEditTask(pv.Metadata.Name)
		if len(res.Packages) > 0 {
			task = res.Packages[0].CloneTask()
		}
		err = markOwned(files, pv)
		return files, fmt.Sprintf("clone %s", upstreamName(up, rev)), task, err
	}
	if err := published.Write(dir); err != nil {
		return nil, "", task, err
	}
	why, task = "apply the variant's mutations", porch.VariantEditTask(pv.Metadata.Name)
	kf, err := engine.DecodeKptfile(engine.KptfileName, published[engine.KptfileName])
	if err != nil {
		return nil, "", task, err
	}
	cur, err := engine.UpstreamOf(kf)
	if err != nil {
		return nil, "", task, fmt.Errorf("published %s/Kptfile: %w", pkg, err)
	}
	// A git ref names fixed content here (a Porch tag); an OCI tag or an
	// archive URL can be re-pointed, so those are always merged: the lock
	// digest changes only if the content did, and equal content plans
	// nothing.
	if cur == nil || cur.Ref != rev || cur.Store != locator.Git {
		if _, err := engine.Update(ctx, r.upstreams, dir, engine.UpdateOptions{Version: rev}); err != nil {
			return nil, "", task, err
		}
		why = fmt.Sprintf("upgrade to %s", upstreamName(up, rev))
		old := ""
		if cur != nil {
			old = cur.String()
		}
		strategy := porch.ResourceMerge
		if kf.Upstream != nil && kf.Upstream.UpdateStrategy != "" {
			strategy = porch.PackageMergeStrategy(kf.Upstream.UpdateStrategy)
		}
		task = porch.UpgradeTask(old, upstreamName(up, rev), local, strategy)
	}
	files, err := engine.ReadTree(dir)
	if err != nil {
		return nil, "", task, err
	}
	return files, why, task, markOwned(files, pv)
}

// upstreamName names a variant's upstream at rev in its store's syntax.
func upstreamName(up *config.Upstream, rev string) string {
	if locator.Store(up.Repo) == locator.Git {
		return fmt.Sprintf("%s/%s@%s", up.Repo, up.Package, rev)
	}
	return locator.WithVersion(locator.ResourceID(up.Repo, "/"+strings.Trim(up.Package, "/")), rev)
}

// markOwned records the owning variant and its deletionPolicy.
func markOwned(files engine.Tree, pv config.PackageVariant) error {
	kf, err := engine.SetKptfileAnnotation(files[engine.KptfileName], OwnerAnnotation, pv.Metadata.Name)
	if err != nil {
		return err
	}
	if kf, err = engine.SetKptfileAnnotation(kf, DeletionPolicyAnnotation, pv.Spec.DeletionPolicy); err != nil {
		return err
	}
	files[engine.KptfileName] = kf
	return nil
}

// editedByOthers names the author of any commit on a draft, since it
// forked from the registered branch, that kptbot did not write.
func (r *reconciler) editedByOthers(commit string) (string, error) {
	repo := r.store.Repo().Git()
	c, err := repo.CommitObject(plumbingHash(commit))
	if err != nil {
		return "", err
	}
	tip, err := repo.CommitObject(plumbingHash(r.tip))
	if err != nil {
		return "", err
	}
	bases, err := c.MergeBase(tip)
	if err != nil {
		return "", err
	}
	stop := map[string]bool{}
	for _, b := range bases {
		stop[b.Hash.String()] = true
	}
	for i := 0; i < 1000 && c != nil && !stop[c.Hash.String()]; i++ {
		if c.Author.Email != r.store.Author.Email {
			return c.Author.Name + " <" + c.Author.Email + ">", nil
		}
		if c.NumParents() == 0 {
			break
		}
		if c, err = c.Parent(0); err != nil {
			return "", err
		}
	}
	return "", nil
}

// workspace picks a workspace name no revision of pkg has used.
func (r *reconciler) workspace(variant, rev, pkg string) string {
	base := variant + "-" + workspaceRev(rev)
	used := map[string]bool{}
	if d := r.packages[pkg]; d != nil {
		for _, dr := range d.drafts {
			used[dr.Workspace] = true
		}
	}
	for i := 1; ; i++ {
		ws := base
		if i > 1 {
			ws = fmt.Sprintf("%s-%d", base, i)
		}
		if !used[ws] && !r.workspaceInHistory(pkg, ws) {
			return ws
		}
	}
}

// workspaceRev makes a revision usable in a workspace (branch) name: a
// digest becomes sha256-<12 hex>, other characters git or Porch would
// refuse become "-"; a fixed archive URL has no revision ("latest").
func workspaceRev(rev string) string {
	if locator.IsDigest(rev) {
		return "sha256-" + rev[len("sha256:"):len("sha256:")+12]
	}
	if rev == "" {
		return config.DefaultRevision
	}
	return strings.Map(func(c rune) rune {
		if c == '/' || c == ':' || c == '~' || c == '^' || c == '\\' || c == ' ' || c == '@' {
			return '-'
		}
		return c
	}, rev)
}

func (r *reconciler) workspaceInHistory(pkg, ws string) bool {
	for _, ref := range r.refs {
		info, ok := porch.ParseRef(ref.Name)
		if !ok || info.Package != pkg || info.Lifecycle != porch.Published {
			continue
		}
		if msg, err := r.store.Repo().CommitMessage(ref.Commit); err == nil {
			if t, found, err := porch.ParseTrailer(msg); err == nil && found && t.WorkspaceName == ws {
				return true
			}
		}
	}
	return false
}

// orphans plans deletionPolicy for packages owned by variants that no
// longer exist.
func (r *reconciler) orphans(names map[string]bool) []Action {
	var out []Action
	pkgs := make([]string, 0, len(r.packages))
	for p := range r.packages {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		d := r.packages[pkg]
		if d.latest == 0 {
			continue
		}
		files, err := r.files(context.Background(), d.latestCommit, pkg)
		if err != nil {
			continue
		}
		o := owner(files)
		if o == "" || names[o] {
			continue
		}
		// The variant is gone: its deletionPolicy, remembered on the
		// package, decides. delete proposes the deletion (a person still
		// approves it); orphan leaves the package alone.
		if annotationOf(files, DeletionPolicyAnnotation) == "orphan" {
			out = append(out, Action{Variant: o, Package: pkg, Kind: "none",
				Why: fmt.Sprintf("variant %s no longer exists; deletionPolicy orphan keeps %s", o, porch.Tag(pkg, d.latest))})
			continue
		}
		out = append(out, Action{Variant: o, Package: pkg, Kind: "propose-delete",
			Why: fmt.Sprintf("variant %s no longer exists; deletionPolicy delete: proposing deletion of %s", o, porch.Tag(pkg, d.latest))})
	}
	return out
}

func (r *reconciler) apply(ctx context.Context, a *Action) error {
	task := a.task.JSON()
	switch a.Kind {
	case "create-draft":
		_, err := r.store.CreateDraft(ctx, a.Package, a.Workspace, a.files, task)
		return err
	case "update-draft":
		_, err := r.store.UpdateDraft(ctx, a.Package, a.Workspace, a.files, task)
		return err
	case "propose-delete":
		d := r.packages[a.Package]
		if d == nil || d.latest == 0 {
			return nil
		}
		err := r.store.ProposeDelete(ctx, a.Package, d.latest)
		if err != nil && strings.Contains(err.Error(), "already exists") {
			return nil // already proposed: idempotent
		}
		return err
	}
	return nil
}
