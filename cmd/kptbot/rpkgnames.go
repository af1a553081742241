package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/gitstore"
	"github.com/kptbot/kptbot/porch"
	sigsyaml "sigs.k8s.io/yaml"
)

// revisionRow is one package revision as porchctl lists it.
type revisionRow struct {
	Name, Package, Workspace string
	// Revision is the published number; 0 for drafts and proposals.
	Revision   int
	Latest     bool
	Lifecycle  porch.Lifecycle
	Repository string
	Commit     string
}

// published reports whether the row is a published revision (v0 is one).
func (r revisionRow) published() bool {
	return r.Lifecycle == porch.Published || r.Lifecycle == porch.DeletionProposed
}

// repositoryName is the name porchctl would know a repository by: the last
// element of its path or URL, without .git.
func repositoryName(repo string) string {
	repo = strings.TrimRight(strings.TrimSuffix(strings.TrimRight(repo, "/"), ".git"), "/")
	return path.Base(strings.ReplaceAll(repo, `\`, "/"))
}

// revisionRows lists the repository's package revisions, one row per
// revision: a published revision proposed for deletion is one row,
// DeletionProposed, as in Porch (git holds it twice, as the tag and the
// deletionProposed/ branch).
func revisionRows(ctx context.Context, f *rpkgFlags) ([]revisionRow, []string, error) {
	if f.repo == "" {
		return nil, nil, errRepoRequired
	}
	repo, err := fetch.Open(ctx, f.repo)
	if err != nil {
		return nil, nil, err
	}
	l, err := gitstore.List(ctx, repo, f.branch)
	if err != nil {
		return nil, nil, err
	}
	name := repositoryName(f.repo)
	var rows []revisionRow
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
			row := revisionRow{Package: p.Name, Workspace: ws, Revision: r.Revision, Lifecycle: r.Lifecycle, Repository: name, Commit: r.Commit}
			if row.published() {
				row.Latest = r.Revision == latest
				if ws == "" {
					row.Workspace = porch.RevisionName(r.Revision) // a tag Porch did not write
				}
			}
			row.Name = porch.PackageRevisionName(name, p.Name, row.Workspace)
			if row.published() {
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
		if a.published() != b.published() {
			return a.published()
		}
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		return a.Workspace < b.Workspace
	})
	return rows, l.Warnings, nil
}

// resolve accepts a package revision name (repository.package.workspace)
// wherever PACKAGE --workspace WS (or --revision N) is accepted. A first
// argument with a dot that is not a package is looked up among the
// repository's revisions. It returns the package and the row named (nil
// for a plain package); acceptNames sets the flags from the row.
func (f *rpkgFlags) resolve(ctx context.Context, arg string) (string, *revisionRow, error) {
	if !strings.Contains(arg, ".") {
		return arg, nil, nil
	}
	rows, _, err := revisionRows(ctx, f)
	if err != nil {
		return "", nil, err
	}
	for i := range rows {
		r := &rows[i]
		if r.Package == arg {
			return arg, nil, nil // a package whose name holds a dot
		}
	}
	for i := range rows {
		r := &rows[i]
		if r.Name != arg {
			continue
		}
		return r.Package, r, nil
	}
	if repo := repositoryName(f.repo); !strings.HasPrefix(arg, repo+".") {
		return "", nil, fmt.Errorf("%w: package revision %q: names in repository %s start with %q (repository.package.workspace; rpkg get lists them)", gitstore.ErrNotFound, arg, f.repo, repo+".")
	}
	return "", nil, fmt.Errorf("%w: no package revision %q in %s (rpkg get lists them)", gitstore.ErrNotFound, arg, f.repo)
}

// packageRevisionObject is a row as porchctl's -o yaml|json shows a
// PackageRevision (the fields a git repository can answer).
type packageRevisionObject struct {
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

func (r revisionRow) object() packageRevisionObject {
	var o packageRevisionObject
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

// printRevisions writes rows as porchctl does: a table with its columns,
// or YAML/JSON objects (one object for a single named revision, else a
// List, as kubectl prints).
func printRevisions(w io.Writer, rows []revisionRow, format string, single bool) error {
	switch format {
	case "", "table":
		tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
		fmt.Fprintln(tw, "NAME\tPACKAGE\tWORKSPACENAME\tREVISION\tLATEST\tLIFECYCLE\tREPOSITORY")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%t\t%s\t%s\n", r.Name, r.Package, r.Workspace, r.Revision, r.Latest, r.Lifecycle, r.Repository)
		}
		return tw.Flush()
	case "yaml", "json":
		var v any
		if single && len(rows) == 1 {
			v = rows[0].object()
		} else {
			items := make([]packageRevisionObject, len(rows))
			for i, r := range rows {
				items[i] = r.object()
			}
			v = map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
		}
		var b []byte
		var err error
		if format == "json" {
			b, err = json.MarshalIndent(v, "", "  ")
			b = append(b, '\n')
		} else {
			b, err = sigsyaml.Marshal(v)
		}
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("-o %q: expected table, yaml or json", format)
}
