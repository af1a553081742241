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
	"strings"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/pkgmerge"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/fetch/sources"
	"github.com/kptbot/kptbot/gitstore"
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
	// Kind is create-draft, update-draft, delete-draft, propose-delete,
	// none or skip.
	Kind string `json:"kind"`
	// Why says what led to it.
	Why string `json:"why"`
	// Workspace is the draft's workspace, for draft actions.
	Workspace string `json:"workspace,omitempty"`
	// Blocking lists required injections without a source: the draft is
	// written but must not be proposed.
	Blocking []string `json:"blocking,omitempty"`
	// Conflicts are the fields where the package's local edits and the
	// new upstream both changed and upstream won; they are in the draft's
	// commit message too.
	Conflicts []pkgmerge.Conflict `json:"conflicts,omitempty"`
	// Lifecycle is where the variant's updatePolicy leaves the revision
	// (Draft, Proposed or Published; Draft when it has conflicts or
	// blocking injections), for draft actions.
	Lifecycle porch.Lifecycle `json:"lifecycle,omitempty"`
	// Published is the tag <pkg>/v<N> of a revision publish approved.
	Published string `json:"published,omitempty"`

	files kptpkg.Tree
	// task is the Porch task the draft's commit records: clone for a new
	// package, upgrade for a new upstream revision, edit for mutations.
	task porch.Task
	// revision is the published revision a propose-delete proposes.
	revision int
	// reject: the revision is proposed and goes back to a draft before
	// it is updated (as the bot updates its open change).
	reject bool
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
func Run(ctx context.Context, store *gitstore.Store, branch string, opts Options) ([]Action, error) {
	src := opts.Sources
	if src == nil {
		var err error
		if src, err = sources.New(sources.Options{}); err != nil {
			return nil, err
		}
	}
	r := &reconciler{store: store, branch: branch, upstreams: variant.Direct{Client: src}}
	if err := r.load(ctx, opts); err != nil {
		return nil, err
	}
	variants, err := r.variants(ctx)
	if err != nil {
		return nil, err
	}
	revs, err := r.revisions(ctx)
	if err != nil {
		return nil, err
	}
	decisions := variant.Decide(variants, revs)
	var plan []Action
	for _, pv := range variants {
		draft, _ := variant.DraftOf(decisions, pv.Metadata.Name)
		a, err := r.plan(ctx, pv, draft)
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", pv.Metadata.Name, err)
		}
		plan = append(plan, a)
	}
	plan = append(plan, r.removals(decisions)...)
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
	store     *gitstore.Store
	branch    string
	upstreams variant.Direct
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
	drafts       []gitstore.PackageRevision // drafts and proposals
	tags         []fetch.GitRef             // published revisions
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
			d.drafts = append(d.drafts, gitstore.PackageRevision{RefInfo: info, Ref: ref.Name, Commit: ref.Commit})
		}
	}
	for pkg, d := range r.packages {
		if n, i := porch.LatestOf(pkg, d.tags, func(r fetch.GitRef) string { return r.Name }); i >= 0 {
			d.latest, d.latestCommit = n, d.tags[i].Commit
		}
	}
	return nil
}

// revisions are the drafts, proposals and latest published revisions of
// every package, with the owner and deletionPolicy their Kptfiles name,
// for the planner's decisions.
func (r *reconciler) revisions(ctx context.Context) ([]variant.Revision, error) {
	var out []variant.Revision
	for pkg, d := range r.packages {
		if d.latest > 0 {
			files, err := r.files(ctx, d.latestCommit, pkg)
			if err != nil {
				return nil, err
			}
			out = append(out, variant.Revision{Package: pkg, Name: porch.Tag(pkg, d.latest), Lifecycle: porch.Published,
				Owner: variant.Owner(files), DeletionPolicy: variant.DeletionPolicy(files)})
		}
		for _, dr := range d.drafts {
			files, err := r.files(ctx, dr.Commit, pkg)
			if err != nil {
				return nil, err
			}
			out = append(out, variant.Revision{Package: pkg, Name: dr.Workspace, Lifecycle: dr.Lifecycle,
				Owner: variant.Owner(files), DeletionPolicy: variant.DeletionPolicy(files)})
		}
	}
	return out, nil
}

// variants are the repository's PackageVariants plus those its
// PackageVariantSets generate for this repository (a set's targets name
// the repository by its Repository metadata.name, or select it by its
// metadata.labels; the CEL variable upstream carries the upstream
// package's Kptfile labels and annotations, as Porch's upstream package
// revision does).
func (r *reconciler) variants(ctx context.Context) ([]config.PackageVariant, error) {
	out := append([]config.PackageVariant(nil), r.cfg.Variants...)
	self := config.Object{Name: r.cfg.Repository.Metadata.Name, Labels: r.cfg.Repository.Metadata.Labels}
	for _, set := range r.cfg.Sets {
		up, err := variant.UpstreamObject(ctx, r.upstreams, set.Spec.Upstream)
		if err != nil {
			return nil, fmt.Errorf("PackageVariantSet %s: %w", set.Metadata.Name, err)
		}
		generated, err := config.Expand(set, config.ExpandInput{
			Upstream:     up,
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

func (r *reconciler) files(ctx context.Context, commit, pkg string) (kptpkg.Tree, error) {
	f, err := r.store.Repo().Tree(ctx, commit, "/"+pkg)
	return kptpkg.Tree(f), err
}

// plan decides what one variant needs: the planner's plan against the
// latest published revision, applied to the variant's draft (its own, or
// one adopted) or a new one.
func (r *reconciler) plan(ctx context.Context, pv config.PackageVariant, draft variant.Decision) (Action, error) {
	pkg := strings.Trim(pv.Spec.Downstream.Package, "/")
	a := Action{Variant: pv.Metadata.Name, Package: pkg}
	in := variant.Input{Variant: pv, Sources: r.sources, ForDeployment: r.cfg.Repository.Spec.Deployment}
	d := r.packages[pkg]
	if d == nil {
		d = &downstream{}
	}
	if d.latest > 0 {
		var err error
		if in.Published, err = r.files(ctx, d.latestCommit, pkg); err != nil {
			return a, err
		}
		in.LocalRevision = porch.Tag(pkg, d.latest)
	}
	p, err := variant.Make(ctx, r.upstreams, in)
	if err != nil {
		return a, err
	}
	a.Why, a.Blocking, a.Conflicts, a.files, a.task = p.Why, p.Blocking, p.Conflicts, p.Tree, p.Task
	a.Lifecycle = variant.Stage(pv.Spec.UpdatePolicy, p)
	switch {
	case p.Kind == variant.Skip:
		a.Kind = "skip"
		return a, nil
	case p.Kind == variant.None && draft.Name == "":
		a.Kind = "none"
		return a, nil
	case draft.Name == "":
		a.Kind = "create-draft"
		a.Workspace = r.workspace(pv.Metadata.Name, p.Revision, pkg)
		return a, nil
	}
	// One open draft per variant: update it rather than opening another.
	a.Workspace = draft.Name
	files, err := r.files(ctx, r.draftCommit(pkg, draft.Name), pkg)
	if err != nil {
		return a, err
	}
	switch {
	case files.Equal(a.files):
		a.Kind, a.Why = "none", fmt.Sprintf("draft %s/%s already holds the desired package", pkg, draft.Name)
	case draft.Lifecycle == porch.Proposed && pv.Spec.UpdatePolicy == "draft":
		// a person proposed it: theirs to approve or reject
		a.Kind, a.Why = "skip", fmt.Sprintf("%s/%s is proposed; approve or reject it before the variant changes it (%s)", pkg, draft.Name, p.Why)
	case draft.Adopted:
		a.Kind, a.Why = "update-draft", fmt.Sprintf("%s: %s", draft.Why, p.Why)
	default:
		edited, err := r.editedByOthers(r.draftCommit(pkg, draft.Name))
		if err != nil {
			return a, err
		}
		if edited != "" {
			a.Kind, a.Why = "skip", fmt.Sprintf("draft %s/%s has commits by %s: left alone; delete the draft (kptbot rpkg del) to let the variant recreate it", pkg, draft.Name, edited)
		} else {
			a.Kind, a.reject = "update-draft", draft.Lifecycle == porch.Proposed
		}
	}
	if a.Kind != "update-draft" {
		a.Lifecycle = ""
	}
	return a, nil
}

// draftCommit is the tip of pkg's draft or proposal in workspace ws.
func (r *reconciler) draftCommit(pkg, ws string) string {
	if d := r.packages[pkg]; d != nil {
		for _, dr := range d.drafts {
			if dr.Workspace == ws {
				return dr.Commit
			}
		}
	}
	return ""
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
