package gitstore

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/porch"
)

// Revision is one package revision as porchctl lists it.
type Revision struct {
	Name, Package, Workspace string
	// Revision is the published number; 0 for drafts and proposals.
	Revision   int
	Latest     bool
	Lifecycle  porch.Lifecycle
	Repository string
	Commit     string
}

// Published reports whether the row is a published revision (v0 is one).
func (r Revision) Published() bool {
	return r.Lifecycle == porch.Published || r.Lifecycle == porch.DeletionProposed
}

// RepositoryName is the name porchctl would know a repository by: the last
// element of its path or URL, without .git.
func RepositoryName(repo string) string {
	repo = strings.TrimRight(strings.TrimSuffix(strings.TrimRight(repo, "/"), ".git"), "/")
	return path.Base(strings.ReplaceAll(repo, `\`, "/"))
}

// Revisions lists the package revisions of the repository at url (its
// registered branch is branch), one row per revision, and the warnings of
// its listing.
func Revisions(ctx context.Context, url, branch string) ([]Revision, []string, error) {
	repo, err := fetch.Open(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	l, err := List(ctx, repo, branch)
	if err != nil {
		return nil, nil, err
	}
	return l.Revisions(RepositoryName(url)), l.Warnings, nil
}

// Revisions is the listing as porchctl's rows, named in repository repo:
// a published revision proposed for deletion is one row, DeletionProposed,
// as in Porch (git holds it twice, as the tag and the deletionProposed/
// branch); a tag Porch did not write has its revision as workspace.
func (l *Listing) Revisions(repo string) []Revision {
	var rows []Revision
	published := map[string]int{} // package/revision -> index in rows
	for _, p := range l.Packages {
		latest := -1
		if p.Published {
			latest = p.Latest
		}
		for _, r := range p.Revisions {
			ws := r.Workspace
			if ws == "" && r.Trailer != nil {
				ws = r.Trailer.WorkspaceName
			}
			row := Revision{Package: p.Name, Workspace: ws, Revision: r.Revision, Lifecycle: r.Lifecycle, Repository: repo, Commit: r.Commit}
			if row.Published() {
				row.Latest = r.Revision == latest
				if ws == "" {
					row.Workspace = porch.RevisionName(r.Revision)
				}
			}
			row.Name = porch.PackageRevisionName(repo, p.Name, row.Workspace)
			if row.Published() {
				key := fmt.Sprintf("%s/%d", p.Name, r.Revision)
				if i, ok := published[key]; ok {
					if r.Lifecycle == porch.DeletionProposed {
						rows[i].Lifecycle = porch.DeletionProposed
					}
					continue
				}
				published[key] = len(rows)
			}
			rows = append(rows, row)
		}
	}
	// By package; published revisions in order, then drafts and proposals.
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		if a.Published() != b.Published() {
			return a.Published()
		}
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		return a.Workspace < b.Workspace
	})
	return rows
}

// ResolveName accepts a package revision name (repository.package.workspace)
// wherever PACKAGE --workspace WS (or --revision N) is accepted: an
// argument with a dot that is not a package of the repository at url is
// looked up among its revisions. It returns the package and the revision
// named (nil for a plain package).
func ResolveName(ctx context.Context, url, branch, arg string) (string, *Revision, error) {
	if !strings.Contains(arg, ".") {
		return arg, nil, nil
	}
	rows, _, err := Revisions(ctx, url, branch)
	if err != nil {
		return "", nil, err
	}
	return resolveName(rows, url, arg)
}

// resolveName finds arg among rows, the revisions of the repository at url.
func resolveName(rows []Revision, url, arg string) (string, *Revision, error) {
	for i := range rows {
		if rows[i].Package == arg {
			return arg, nil, nil // a package whose name holds a dot
		}
	}
	for i := range rows {
		if r := &rows[i]; r.Name == arg {
			return r.Package, r, nil
		}
	}
	if repo := RepositoryName(url); !strings.HasPrefix(arg, repo+".") {
		return "", nil, fmt.Errorf("%w: package revision %q: names in repository %s start with %q (repository.package.workspace; rpkg get lists them)", ErrNotFound, arg, url, repo+".")
	}
	return "", nil, fmt.Errorf("%w: no package revision %q in %s (rpkg get lists them)", ErrNotFound, arg, url)
}

// PackageRevisionObject is a revision as porchctl's -o yaml|json shows a
// PackageRevision (the fields a git repository can answer).
type PackageRevisionObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec struct {
		PackageName   string `json:"packageName"`
		Repository    string `json:"repository"`
		WorkspaceName string `json:"workspaceName"`
		Revision      int    `json:"revision"`
		Lifecycle     string `json:"lifecycle"`
	} `json:"spec"`
}

// Object is the revision as a PackageRevision object.
func (r Revision) Object() PackageRevisionObject {
	var o PackageRevisionObject
	o.APIVersion, o.Kind = "porch.kpt.dev/v1alpha1", "PackageRevision"
	o.Metadata.Name = r.Name
	if r.Latest {
		o.Metadata.Labels = map[string]string{"kpt.dev/latest-revision": "true"}
	}
	o.Metadata.Annotations = map[string]string{"kptbot.dev/commit": r.Commit}
	o.Spec.PackageName, o.Spec.Repository, o.Spec.WorkspaceName = r.Package, r.Repository, r.Workspace
	o.Spec.Revision, o.Spec.Lifecycle = r.Revision, string(r.Lifecycle)
	return o
}
