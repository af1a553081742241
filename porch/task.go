package porch

import (
	"encoding/json"
	"fmt"
)

// TaskType is a Task's kind, with Porch's names.
type TaskType string

// Porch's task types (api/porch/v1alpha1), then those older Porch versions
// and kptbot record in trailers: Porch reads any type back, and only
// init, clone, edit and upgrade start a revision's history.
const (
	TaskTypeInit    TaskType = "init"
	TaskTypeClone   TaskType = "clone"
	TaskTypeEdit    TaskType = "edit"
	TaskTypeUpgrade TaskType = "upgrade"
	TaskTypeRender  TaskType = "render"
	TaskTypePush    TaskType = "push"
	TaskTypeNone    TaskType = ""

	// TaskTypePatch (older Porch, kptbot rpkg push) replaces a draft's files.
	TaskTypePatch TaskType = "patch"
	// TaskTypeUpdate (older Porch, kptbot rpkg update) merges a new upstream.
	TaskTypeUpdate TaskType = "update"
	// TaskTypeDelete is kptbot's commit taking a deleted package off the
	// registered branch.
	TaskTypeDelete TaskType = "delete"
)

// Task is Porch's v1alpha1 Task: a type and the spec of that type. Its JSON
// is Porch's byte for byte (same fields, order and omitempty), so a
// trailer kptbot writes reads the same in Porch.
type Task struct {
	Type    TaskType                `json:"type"`
	Init    *PackageInitTaskSpec    `json:"init,omitempty"`
	Clone   *PackageCloneTaskSpec   `json:"clone,omitempty"`
	Edit    *PackageEditTaskSpec    `json:"edit,omitempty"`
	Upgrade *PackageUpgradeTaskSpec `json:"upgrade,omitempty"`
}

// PackageInitTaskSpec is Porch's init task: a new, empty package.
type PackageInitTaskSpec struct {
	Subpackage  string   `json:"subpackage,omitempty"`
	Description string   `json:"description,omitempty"`
	Keywords    []string `json:"keywords,omitempty"`
	Site        string   `json:"site,omitempty"`
}

// PackageCloneTaskSpec is Porch's clone task: a package copied from an
// upstream.
type PackageCloneTaskSpec struct {
	Upstream UpstreamPackage `json:"upstreamRef,omitempty"`
}

// PackageEditTaskSpec is Porch's edit task: a new revision copied from a
// published one (Source). PackageVariant is kptbot's: the variant whose
// mutations made the revision (Porch ignores the field).
type PackageEditTaskSpec struct {
	Source         *PackageRevisionRef `json:"sourceRef,omitempty"`
	PackageVariant string              `json:"packageVariant,omitempty"`
}

// PackageUpgradeTaskSpec is Porch's upgrade task: the local revision's
// changes on OldUpstream merged onto NewUpstream with Strategy.
type PackageUpgradeTaskSpec struct {
	OldUpstream             PackageRevisionRef   `json:"oldUpstreamRef,omitempty"`
	NewUpstream             PackageRevisionRef   `json:"newUpstreamRef,omitempty"`
	LocalPackageRevisionRef PackageRevisionRef   `json:"localPackageRevisionRef,omitempty"`
	Strategy                PackageMergeStrategy `json:"strategy,omitempty"`
}

// PackageMergeStrategy is how an upgrade merges (kpt's update strategies).
type PackageMergeStrategy string

// Porch's merge strategies.
const (
	ResourceMerge      PackageMergeStrategy = "resource-merge"
	FastForward        PackageMergeStrategy = "fast-forward"
	ForceDeleteReplace PackageMergeStrategy = "force-delete-replace"
	CopyMerge          PackageMergeStrategy = "copy-merge"
)

// RepositoryType is an upstream's store.
type RepositoryType string

// Porch's repository types, and kptbot's http for archives (Porch has no
// archive upstreams).
const (
	RepositoryTypeGit  RepositoryType = "git"
	RepositoryTypeOCI  RepositoryType = "oci"
	RepositoryTypeHTTP RepositoryType = "http"
)

// UpstreamPackage is where a clone came from: a git directory, an OCI
// image, another package revision (UpstreamRef) or, kptbot's own, an
// archive (HTTP).
type UpstreamPackage struct {
	Type        RepositoryType      `json:"type,omitempty"`
	Git         *GitPackage         `json:"git,omitempty"`
	Oci         *OciPackage         `json:"oci,omitempty"`
	UpstreamRef *PackageRevisionRef `json:"upstreamRef,omitempty"`
	HTTP        *HTTPPackage        `json:"http,omitempty"`
}

// GitPackage is a package in a git repository. SecretRef is kept a value,
// as in Porch, so it is always written (as {"name":""} when unset).
type GitPackage struct {
	Repo      string    `json:"repo"`
	Ref       string    `json:"ref"`
	Directory string    `json:"directory"`
	SecretRef SecretRef `json:"secretRef,omitempty"`
}

// SecretRef names the Secret holding a repository's credentials.
type SecretRef struct {
	Name string `json:"name"`
}

// OciPackage is a package in an OCI image.
type OciPackage struct {
	Image string `json:"image"`
}

// HTTPPackage is kptbot's archive upstream: a directory of the archive at
// URL, whose content had Digest.
type HTTPPackage struct {
	URL       string `json:"url"`
	Directory string `json:"directory"`
	Digest    string `json:"digest"`
}

// PackageRevisionRef names a package revision.
type PackageRevisionRef struct {
	Name string `json:"name"`
}

// InitTask is the task of a new package (kpt pkg init / porchctl rpkg init).
func InitTask(description string) Task {
	return Task{Type: TaskTypeInit, Init: &PackageInitTaskSpec{Description: description}}
}

// CloneGitTask is the task of a clone of directory dir of the git
// repository repo at ref, as porchctl rpkg clone records it.
func CloneGitTask(repo, dir, ref string) Task {
	return cloneTask(UpstreamPackage{Type: RepositoryTypeGit, Git: &GitPackage{Repo: repo, Ref: ref, Directory: dir}})
}

// CloneOCITask is the task of a clone of an OCI image (best pinned by
// digest: image@sha256:...).
func CloneOCITask(image string) Task {
	return cloneTask(UpstreamPackage{Type: RepositoryTypeOCI, Oci: &OciPackage{Image: image}})
}

// CloneHTTPTask is the task of a clone of directory dir of the archive at
// url, whose content had digest.
func CloneHTTPTask(url, dir, digest string) Task {
	return cloneTask(UpstreamPackage{Type: RepositoryTypeHTTP, HTTP: &HTTPPackage{URL: url, Directory: dir, Digest: digest}})
}

// CloneRevisionTask is the task of a clone of another package revision,
// as Porch's PackageVariant controller records it.
func CloneRevisionTask(upstream string) Task {
	return cloneTask(UpstreamPackage{UpstreamRef: &PackageRevisionRef{Name: upstream}})
}

func cloneTask(u UpstreamPackage) Task {
	return Task{Type: TaskTypeClone, Clone: &PackageCloneTaskSpec{Upstream: u}}
}

// EditTask is the task of a new revision copied from published revision
// source (porchctl rpkg copy).
func EditTask(source string) Task {
	return Task{Type: TaskTypeEdit, Edit: &PackageEditTaskSpec{Source: &PackageRevisionRef{Name: source}}}
}

// VariantEditTask is the task of a revision made by applying the
// PackageVariant variant's mutations.
func VariantEditTask(variant string) Task {
	return Task{Type: TaskTypeEdit, Edit: &PackageEditTaskSpec{PackageVariant: variant}}
}

// UpgradeTask is the task of a revision that carries local's changes on
// oldUpstream over to newUpstream, as porchctl rpkg upgrade and Porch's
// PackageVariant controller record it; strategy "" is Porch's default
// (resource-merge) and is left out, as Porch does.
func UpgradeTask(oldUpstream, newUpstream, local string, strategy PackageMergeStrategy) Task {
	return Task{Type: TaskTypeUpgrade, Upgrade: &PackageUpgradeTaskSpec{
		OldUpstream:             PackageRevisionRef{Name: oldUpstream},
		NewUpstream:             PackageRevisionRef{Name: newUpstream},
		LocalPackageRevisionRef: PackageRevisionRef{Name: local},
		Strategy:                strategy,
	}}
}

// TypeTask is a task with a type and no spec (patch, update, delete).
func TypeTask(t TaskType) Task { return Task{Type: t} }

// JSON is the task's JSON, as Porch writes it in trailers.
func (t Task) JSON() []byte {
	b, err := json.Marshal(t)
	if err != nil {
		// Only strings, slices of strings and pointers to such structs:
		// encoding cannot fail.
		panic(fmt.Sprintf("porch: encoding a task: %v", err))
	}
	return b
}

// ParseTask reads a task's JSON; fields of tasks Porch no longer has (an
// old eval's image, a patch's contents) are ignored, as Porch ignores
// them. A missing or non-string type is an error.
func ParseTask(b []byte) (Task, error) {
	var probe struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return Task{}, fmt.Errorf("task %.80q: expected a JSON object: %w", b, err)
	}
	if probe.Type == nil {
		return Task{}, fmt.Errorf("task %.80q: expected a \"type\" field", b)
	}
	var t Task
	if err := json.Unmarshal(b, &t); err != nil {
		return Task{}, fmt.Errorf("task %.80q: %w", b, err)
	}
	return t, nil
}

// CommitSubject is the subject of the commit a task makes, as Porch
// writes it (pkg/externalrepo/git formatCommitMessage).
func CommitSubject(t TaskType) string {
	switch t {
	case TaskTypeInit:
		return "Creating new empty revision"
	case TaskTypeRender:
		return "Rendering package"
	case TaskTypeEdit:
		return "Creating new revision by copying previous revision"
	case TaskTypeClone:
		return "Creating new revision by cloning"
	case TaskTypeUpgrade:
		return "Upgrading revision"
	case TaskTypeNone:
		return "Intermediate commit"
	}
	return "Intermediate commit: " + string(t)
}

// ApproveSubject is the subject of the commit publishing revision n of pkg
// onto the registered branch, as Porch writes it.
func ApproveSubject(pkg string, n int) string {
	return fmt.Sprintf("Approving package revision %s/%d", pkg, n)
}
