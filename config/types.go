// Package config reads kptbot.yaml, the per-repository configuration: a
// Repository, PackageVariants and PackageVariantSets, as KRM objects of
// apiVersion kptbot.dev/v1alpha1 with Porch's field names where Porch has
// the field. Parsing is strict and pure: every problem is reported at once,
// naming the file, document, field path, the bad value and what was
// expected; defaults are applied in one place (Defaults).
package config

import kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"

// APIVersion is the apiVersion of every kptbot.yaml object.
const APIVersion = "kptbot.dev/v1alpha1"

// Kinds kptbot.yaml may hold.
const (
	KindRepository        = "Repository"
	KindPackageVariant    = "PackageVariant"
	KindPackageVariantSet = "PackageVariantSet"
)

// File is a parsed kptbot.yaml.
type File struct {
	// Name is the file the objects were read from, for messages.
	Name string
	// Repository is the repository's settings (nil when absent).
	Repository *Repository
	// Variants and Sets are in file order.
	Variants []PackageVariant
	Sets     []PackageVariantSet

	repositoryAt located
	variantsAt   []located
	setsAt       []located
}

// ObjectMeta is the metadata kptbot.yaml objects carry.
type ObjectMeta struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// TypeMeta is apiVersion and kind.
type TypeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// Repository configures the repository kptbot.yaml lives in.
type Repository struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta     `json:"metadata"`
	Spec     RepositorySpec `json:"spec"`
}

// RepositorySpec is a Repository's settings.
type RepositorySpec struct {
	// Branch is the registered branch; empty means the forge's default branch.
	Branch string `json:"branch,omitempty"`
	// Directory is where packages live, relative to the repository root.
	Directory string `json:"directory,omitempty"`
	// Deployment marks a deployment repository (packages are deployable).
	Deployment bool `json:"deployment,omitempty"`
	// InjectionSources are directories holding objects for config injection.
	InjectionSources []string `json:"injectionSources,omitempty"`
	// Approvals says who may approve a proposed package.
	Approvals *Approvals `json:"approvals,omitempty"`
	// Guardrails are functions applied to every package on every change.
	Guardrails *Pipeline `json:"guardrails,omitempty"`
	// UpdatePolicy is draft, propose (default) or publish.
	UpdatePolicy string `json:"updatePolicy,omitempty"`
	// MergeMethod is merge (default), squash or rebase.
	MergeMethod string `json:"mergeMethod,omitempty"`
	// MaxOpenUpdates caps the open update changes (default 20).
	MaxOpenUpdates int `json:"maxOpenUpdates,omitempty"`
	// AcceptVariantsFrom lists the repositories whose PackageVariantSets
	// may write into this one: a set elsewhere can only propose what this
	// repository's own default branch consents to.
	AcceptVariantsFrom []VariantSource `json:"acceptVariantsFrom,omitempty"`
	// AllowedDownstreams lists the repositories (owner/name, owner/* for
	// every repository under owner, forge:owner/name on another forge)
	// that may copy this repository's packages although they could not
	// read it themselves.
	AllowedDownstreams []string `json:"allowedDownstreams,omitempty"`
}

// VariantSource is one repository whose PackageVariantSets this repository
// accepts variants from, and how those variants are applied here: never
// as the set says, since the set's author is not this repository's owner.
// In kptbot.yaml it is owner/name, or a mapping with repo and policies.
type VariantSource struct {
	// Repo is owner/name (group/.../project on GitLab) on the same forge.
	Repo string `json:"repo"`
	// UpdatePolicy is draft, propose or publish for the variants this
	// source generates (default: the Repository's updatePolicy).
	UpdatePolicy string `json:"updatePolicy,omitempty"`
	// AdoptionPolicy is adoptNone (default) or adoptExisting.
	AdoptionPolicy string `json:"adoptionPolicy,omitempty"`
}

// Approvals says who may approve.
type Approvals struct {
	Users []string `json:"users,omitempty"`
	Teams []string `json:"teams,omitempty"`
	// Minimum is the number of approvals needed (default 1).
	Minimum int `json:"minimum,omitempty"`
	// AllowAuthor lets a change's author approve it (default false).
	AllowAuthor bool `json:"allowAuthor,omitempty"`
}

// Pipeline is a list of mutators and validators, as in a Kptfile.
type Pipeline struct {
	Mutators   []kptfilev1.Function `json:"mutators,omitempty"`
	Validators []kptfilev1.Function `json:"validators,omitempty"`
}

// Upstream names the package a variant is cloned from.
type Upstream struct {
	// Repo is a git URL, or owner/name on the same forge; or an OCI
	// repository oci://REGISTRY/REPO (Package is then the package's image
	// repository below it, as Porch lays packages out); or an archive URL
	// https://HOST/PATH.tar.gz|.tgz|.zip, optionally with a {version}
	// placeholder filled from Revision (Package is a directory inside it).
	Repo string `json:"repo"`
	// Package is the package path in the upstream repository.
	Package string `json:"package"`
	// Revision is latest (default), an exact revision such as v3, or a
	// semver range; for OCI a tag or sha256: digest, for an archive
	// template the version to fill in.
	Revision string `json:"revision,omitempty"`
	// Versions are the versions an archive URL template is tried with
	// when Revision is latest (the highest that exists wins): an HTTP
	// server has no tag list to find the latest in.
	Versions []string `json:"versions,omitempty"`
	// WorkspaceName, as Porch's upstream.workspaceName, picks the
	// published revision of Package whose workspace (the Porch trailer of
	// its commit) has this name, instead of a revision.
	WorkspaceName string `json:"workspaceName,omitempty"`
}

// Downstream names the package a variant produces.
type Downstream struct {
	// Repo is the downstream repository (default: the repository holding
	// this kptbot.yaml).
	Repo string `json:"repo,omitempty"`
	// Package is the package path in the downstream repository.
	Package string `json:"package"`
}

// PackageContext edits the package's package-context.yaml.
type PackageContext struct {
	Data       map[string]string `json:"data,omitempty"`
	RemoveKeys []string          `json:"removeKeys,omitempty"`
}

// InjectionSelector picks an in-cluster (here: in-repository) object to
// inject, as Porch's.
type InjectionSelector struct {
	Group   string `json:"group,omitempty"`
	Version string `json:"version,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Name    string `json:"name"`
}

// PackageVariant is Porch's PackageVariant, plus kptbot's paused and
// updatePolicy.
type PackageVariant struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta         `json:"metadata"`
	Spec     PackageVariantSpec `json:"spec"`
}

// PackageVariantSpec is a PackageVariant's spec.
type PackageVariantSpec struct {
	Upstream       *Upstream           `json:"upstream,omitempty"`
	Downstream     *Downstream         `json:"downstream,omitempty"`
	AdoptionPolicy string              `json:"adoptionPolicy,omitempty"`
	DeletionPolicy string              `json:"deletionPolicy,omitempty"`
	Labels         map[string]string   `json:"labels,omitempty"`
	Annotations    map[string]string   `json:"annotations,omitempty"`
	PackageContext *PackageContext     `json:"packageContext,omitempty"`
	Pipeline       *Pipeline           `json:"pipeline,omitempty"`
	Injectors      []InjectionSelector `json:"injectors,omitempty"`
	// Paused variants are reported but not changed.
	Paused bool `json:"paused,omitempty"`
	// UpdatePolicy overrides the Repository's (draft, propose, publish).
	UpdatePolicy string `json:"updatePolicy,omitempty"`
}

// PackageVariantSet is Porch's PackageVariantSet: one PackageVariant per
// target, expanded in memory at each reconcile.
type PackageVariantSet struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta            `json:"metadata"`
	Spec     PackageVariantSetSpec `json:"spec"`
}

// PackageVariantSetSpec is a PackageVariantSet's spec.
type PackageVariantSetSpec struct {
	Upstream *Upstream `json:"upstream,omitempty"`
	Targets  []Target  `json:"targets,omitempty"`
}

// Target selects downstream repositories (exactly one of Repositories and
// RepositorySelector) and how each variant is built.
type Target struct {
	Repositories       []RepositoryTarget      `json:"repositories,omitempty"`
	RepositorySelector *LabelSelector          `json:"repositorySelector,omitempty"`
	Template           *PackageVariantTemplate `json:"template,omitempty"`
}

// RepositoryTarget is one explicit downstream repository.
type RepositoryTarget struct {
	// Name is owner/name (or a git URL).
	Name string `json:"name"`
	// PackageNames are downstream package names (default: the upstream's).
	PackageNames []string `json:"packageNames,omitempty"`
}

// LabelSelector selects repositories by their labels (forge topics).
type LabelSelector struct {
	MatchLabels      map[string]string          `json:"matchLabels,omitempty"`
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is Kubernetes' set-based requirement.
type LabelSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// PackageVariantTemplate is Porch's template, with CEL expressions over
// repoDefault, packageDefault, upstream, target and repository.
type PackageVariantTemplate struct {
	Downstream      *DownstreamTemplate         `json:"downstream,omitempty"`
	DownstreamExprs *DownstreamExprs            `json:"downstreamExprs,omitempty"`
	AdoptionPolicy  string                      `json:"adoptionPolicy,omitempty"`
	DeletionPolicy  string                      `json:"deletionPolicy,omitempty"`
	Labels          map[string]string           `json:"labels,omitempty"`
	LabelExprs      []MapExpr                   `json:"labelExprs,omitempty"`
	Annotations     map[string]string           `json:"annotations,omitempty"`
	AnnotationExprs []MapExpr                   `json:"annotationExprs,omitempty"`
	PackageContext  *PackageContextTemplate     `json:"packageContext,omitempty"`
	Pipeline        *PipelineTemplate           `json:"pipeline,omitempty"`
	Injectors       []InjectionSelectorTemplate `json:"injectors,omitempty"`
	UpdatePolicy    string                      `json:"updatePolicy,omitempty"`
}

// DownstreamTemplate sets the downstream literally or by expression
// (kptbot accepts the expressions here as well as in downstreamExprs).
type DownstreamTemplate struct {
	Repo        string `json:"repo,omitempty"`
	Package     string `json:"package,omitempty"`
	RepoExpr    string `json:"repoExpr,omitempty"`
	PackageExpr string `json:"packageExpr,omitempty"`
}

// DownstreamExprs is Porch's form of downstream expressions.
type DownstreamExprs struct {
	RepoExpr    string `json:"repoExpr,omitempty"`
	PackageExpr string `json:"packageExpr,omitempty"`
}

// MapExpr is one map entry given literally or by CEL expression.
type MapExpr struct {
	Key       string `json:"key,omitempty"`
	KeyExpr   string `json:"keyExpr,omitempty"`
	Value     string `json:"value,omitempty"`
	ValueExpr string `json:"valueExpr,omitempty"`
}

// PackageContextTemplate is PackageContext with expressions.
type PackageContextTemplate struct {
	Data           map[string]string `json:"data,omitempty"`
	DataExprs      []MapExpr         `json:"dataExprs,omitempty"`
	RemoveKeys     []string          `json:"removeKeys,omitempty"`
	RemoveKeyExprs []string          `json:"removeKeyExprs,omitempty"`
}

// PipelineTemplate is Pipeline with expressions in function configs.
type PipelineTemplate struct {
	Mutators   []FunctionTemplate `json:"mutators,omitempty"`
	Validators []FunctionTemplate `json:"validators,omitempty"`
}

// FunctionTemplate is a function whose configMap may come from expressions.
type FunctionTemplate struct {
	kptfilev1.Function `json:",inline"`
	ConfigMapExprs     []MapExpr `json:"configMapExprs,omitempty"`
}

// InjectionSelectorTemplate is an injector whose name may be an expression
// (exactly one of name and nameExpr).
type InjectionSelectorTemplate struct {
	Group    string `json:"group,omitempty"`
	Version  string `json:"version,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Name     string `json:"name,omitempty"`
	NameExpr string `json:"nameExpr,omitempty"`
}

// Locations are where a repository's kptbot.yaml may be, in order of
// preference (a new slice each call: callers may not share it).
func Locations() []string {
	return []string{"kptbot.yaml", ".github/kptbot.yaml", ".gitlab/kptbot.yaml"}
}
