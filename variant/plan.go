package variant

import (
	"context"
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/pkgmerge"
	"github.com/kptbot/kptbot/engine/render"
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/porch"
)

// Kind is what a plan does to the downstream package.
type Kind string

// The kinds of plan.
const (
	// Clone creates the package from the upstream (it was never published).
	Clone Kind = "clone"
	// Upgrade merges a new upstream revision into the published package.
	Upgrade Kind = "upgrade"
	// Edit re-applies the variant's mutations to the published package.
	Edit Kind = "edit"
	// None: the published package is what the variant wants.
	None Kind = "none"
	// Skip: the variant may not touch the package (paused, or owned by
	// someone else and not adopted).
	Skip Kind = "skip"
	// Delete proposes deleting a package whose variant is gone
	// (deletionPolicy delete).
	Delete Kind = "delete"
	// Orphan keeps a package whose variant is gone (deletionPolicy orphan).
	Orphan Kind = "orphan"
)

// Resolver fetches a variant's upstream and says which revision its
// revision policy picks now. The bot resolves through the forges it
// serves, the CLI through git, OCI and HTTP directly.
type Resolver interface {
	engine.Fetcher
	// Latest is the upstream revision the variant follows now: its
	// revision as given, or the latest published one.
	Latest(ctx context.Context, up *config.Upstream) (string, error)
}

// Input is what Make needs about one variant and its downstream.
type Input struct {
	Variant config.PackageVariant
	// Published is the downstream package as published now (nil: never
	// published).
	Published kptpkg.Tree
	// LocalRevision names the published revision (<pkg>/v<N>) an upgrade
	// carries local changes from; "" when there is none.
	LocalRevision string
	// Sources are the objects available for config injection.
	Sources []*yaml.RNode
	// ForDeployment clones with package-context.yaml, as the deployment
	// repositories of Porch do.
	ForDeployment bool
	// Revision, when set, overrides the variant's revision policy.
	Revision string
	// UpstreamRepo is the repository a clone records in its Kptfile (the
	// variant's upstream repo when empty), so kpt can update it too.
	UpstreamRepo string
}

// Plan is what one variant needs done to its downstream package.
type Plan struct {
	Variant string `json:"variant"`
	Package string `json:"package"`
	Kind    Kind   `json:"kind"`
	Why     string `json:"why"`
	// Revision is the upstream revision planned; FromRevision the one the
	// published package records ("" for a clone).
	Revision     string `json:"revision,omitempty"`
	FromRevision string `json:"fromRevision,omitempty"`
	// Conflicts are fields where local and upstream both changed and
	// upstream won: never taken silently, each applier shows them.
	Conflicts []pkgmerge.Conflict `json:"conflicts,omitempty"`
	// Blocking lists required injection points without a source: the
	// package may be drafted but not proposed.
	Blocking []string `json:"blocking,omitempty"`
	// Lock is the upstream commit (or digest) the package is locked to.
	Lock string `json:"lock,omitempty"`
	// Tree is the rendered desired package (clone, upgrade, edit, none).
	Tree kptpkg.Tree `json:"-"`
	// Task is what Porch records for the revision: clone, upgrade or the
	// variant's edit.
	Task porch.Task `json:"-"`
}

// Changes reports whether the plan writes a new revision.
func (p *Plan) Changes() bool { return p.Kind == Clone || p.Kind == Upgrade || p.Kind == Edit }

// Make plans one variant: the upstream cloned (first time) or the
// published package merged with the upstream revision (3-way, local edits
// kept), then the variant's mutations, then rendered; compared with what
// is published. It writes nothing but a scratch directory.
func Make(ctx context.Context, r Resolver, in Input) (*Plan, error) {
	pv := in.Variant
	p := &Plan{Variant: pv.Metadata.Name, Package: strings.Trim(pv.Spec.Downstream.Package, "/")}
	if pv.Spec.Paused {
		p.Kind, p.Why = Skip, "paused"
		return p, nil
	}
	if len(in.Published) > 0 {
		if why, ok := Owns(pv, annotation(in.Published, porch.OwnerAnnotation)); !ok {
			p.Kind, p.Why = Skip, fmt.Sprintf("%s %s", nameOr(in.LocalRevision, p.Package), why)
			return p, nil
		}
	}
	rev := in.Revision
	if rev == "" {
		var err error
		if rev, err = r.Latest(ctx, pv.Spec.Upstream); err != nil {
			return nil, err
		}
	}
	p.Revision = rev
	desired, err := p.desired(ctx, r, in)
	if err != nil {
		return nil, err
	}
	res, err := Apply(desired, pv, in.Sources)
	if err != nil {
		return nil, err
	}
	p.Blocking = res.Blocking
	out, err := render.RenderTree(ctx, res.Tree, render.RenderOptions{})
	if err != nil {
		return nil, fmt.Errorf("rendering the variant: %w", err)
	}
	p.Tree = out.Tree
	if len(in.Published) > 0 && in.Published.Equal(p.Tree) {
		p.Kind, p.Why = None, fmt.Sprintf("%s is up to date with %s", nameOr(in.LocalRevision, p.Package), UpstreamName(pv.Spec.Upstream, rev))
	}
	return p, nil
}

// Owns decides whether the variant pv may write a package whose Kptfile
// names owner as its variant: its own, or any with adoptionPolicy
// adoptExisting (Porch's adoption). why says why not.
func Owns(pv config.PackageVariant, owner string) (why string, ok bool) {
	if owner == pv.Metadata.Name || pv.Spec.AdoptionPolicy == "adoptExisting" {
		return "", true
	}
	return fmt.Sprintf("exists and is not owned by this variant (owner %q); adoptionPolicy is adoptNone", owner), false
}

// desired is the package before the variant's mutations, with the kind,
// reason, task, lock and conflicts of getting there.
func (p *Plan) desired(ctx context.Context, r Resolver, in Input) (kptpkg.Tree, error) {
	name := path.Base(p.Package)
	up := in.Variant.Spec.Upstream
	if len(in.Published) == 0 {
		repo := in.UpstreamRepo
		if repo == "" {
			repo = up.Repo
		}
		files, res, err := engine.GetTree(ctx, r, name, engine.GetOptions{Repo: repo, Dir: "/" + strings.Trim(up.Package, "/"), Version: p.Revision, ForDeployment: in.ForDeployment})
		if err != nil {
			return nil, err
		}
		p.Kind, p.Why, p.Task = Clone, "clone "+UpstreamName(up, p.Revision), porch.VariantEditTask(p.Variant)
		if len(res.Packages) > 0 {
			p.Lock, p.Task = res.Packages[0].Resolved.Commit, res.Packages[0].CloneTask()
		}
		return owned(files, in.Variant)
	}
	p.Kind, p.Why, p.Task = Edit, "apply the variant's mutations", porch.VariantEditTask(p.Variant)
	kf, err := kptpkg.DecodeKptfile(kptpkg.KptfileName, in.Published[kptpkg.KptfileName])
	if err != nil {
		return nil, err
	}
	cur, err := kptpkg.UpstreamOf(kf)
	if err != nil {
		return nil, fmt.Errorf("published %s/%s: %w", p.Package, kptpkg.KptfileName, err)
	}
	if cur != nil {
		p.FromRevision = cur.Ref
	}
	files := in.Published
	if NeedsMerge(cur, p.Revision) {
		merged, res, err := engine.UpdateTree(ctx, r, p.Package, in.Published, engine.UpdateOptions{Version: p.Revision})
		if err != nil {
			return nil, err
		}
		files = merged
		p.Conflicts = res.Conflicts
		if len(res.Packages) > 0 {
			p.Lock = res.Packages[0].Resolved.Commit
		}
		p.Kind = Upgrade
		p.Why = "upgrade to " + UpstreamName(up, p.Revision)
		strategy := porch.ResourceMerge
		if kf.Upstream != nil && kf.Upstream.UpdateStrategy != "" {
			strategy = porch.PackageMergeStrategy(kf.Upstream.UpdateStrategy)
		}
		p.Task = porch.UpgradeTask(UpstreamName(up, p.FromRevision), UpstreamName(up, p.Revision), nameOr(in.LocalRevision, p.Package), strategy)
	}
	return owned(files, in.Variant)
}

// NeedsMerge reports whether a package recording the upstream cur must be
// merged with revision rev. A git ref names fixed content here (a Porch
// tag); an OCI tag or an archive URL can be re-pointed, so those are
// always merged: the lock changes only if the content did, and equal
// content plans nothing.
func NeedsMerge(cur *kptpkg.Origin, rev string) bool {
	return cur == nil || cur.Ref != rev || (cur.Store != locator.Git && cur.Store != "")
}

// owned is a copy of the package marked as the variant's, with its
// deletionPolicy (remembered because the policy must still apply after the
// variant is removed from kptbot.yaml).
func owned(in kptpkg.Tree, pv config.PackageVariant) (kptpkg.Tree, error) {
	files := kptpkg.Tree{}
	for p, b := range in {
		files[p] = b
	}
	kf, err := kptpkg.SetKptfileAnnotation(files[kptpkg.KptfileName], porch.OwnerAnnotation, pv.Metadata.Name)
	if err == nil {
		kf, err = kptpkg.SetKptfileAnnotation(kf, porch.DeletionPolicyAnnotation, pv.Spec.DeletionPolicy)
	}
	if err != nil {
		return nil, fmt.Errorf("marking the package as variant %s's: %w", pv.Metadata.Name, err)
	}
	files[kptpkg.KptfileName] = kf
	return files, nil
}

// UpstreamName names a variant's upstream at rev in its store's syntax:
// repo/package@rev for git, the locator with its version otherwise.
func UpstreamName(up *config.Upstream, rev string) string {
	if locator.Store(up.Repo) == locator.Git {
		return fmt.Sprintf("%s/%s@%s", strings.TrimSuffix(up.Repo, ".git"), strings.Trim(up.Package, "/"), rev)
	}
	return locator.WithVersion(locator.ResourceID(up.Repo, "/"+strings.Trim(up.Package, "/")), rev)
}

// annotation is a metadata annotation of the package's Kptfile ("" when
// the Kptfile is missing or unreadable).
func annotation(files kptpkg.Tree, key string) string {
	kf, err := kptpkg.DecodeKptfile(kptpkg.KptfileName, files[kptpkg.KptfileName])
	if err != nil {
		return ""
	}
	return kf.Annotations[key]
}

// Owner is the variant a package's Kptfile names as its owner.
func Owner(files kptpkg.Tree) string { return annotation(files, porch.OwnerAnnotation) }

// DeletionPolicy is the deletionPolicy a package's Kptfile remembers.
func DeletionPolicy(files kptpkg.Tree) string {
	return annotation(files, porch.DeletionPolicyAnnotation)
}

func nameOr(name, fallback string) string {
	if name == "" {
		return fallback
	}
	return name
}

// Stage is the lifecycle an applier leaves a variant's new revision in:
// its updatePolicy (draft, propose, publish), held back to a draft when
// the upgrade took upstream's value over local edits or a required
// injection point is empty, so a person looks first. The bot maps it to a
// draft, ready or merged change; plain git to Porch's branches.
func Stage(policy string, p *Plan) porch.Lifecycle {
	switch {
	case policy == "draft" || len(p.Conflicts) > 0 || len(p.Blocking) > 0:
		return porch.Draft
	case policy == "publish":
		return porch.Published
	}
	return porch.Proposed
}
