package gitstore

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	sigsyaml "sigs.k8s.io/yaml"
)

// SelectRevisions keeps the rows porchctl's `rpkg get NAME` shows: arg is
// a package revision name or a package name. single reports whether arg
// named one revision (porchctl then prints one object instead of a List).
func SelectRevisions(rows []Revision, arg, repo string) (keep []Revision, single bool, err error) {
	for _, r := range rows {
		if r.Name == arg || r.Package == arg {
			keep = append(keep, r)
			single = single || r.Name == arg
		}
	}
	if len(keep) == 0 {
		return nil, false, fmt.Errorf("%w: no package revision or package %q in %s", ErrNotFound, arg, repo)
	}
	return keep, single, nil
}

// WriteRevisions writes rows as porchctl does: format "table" (or "") is
// porchctl's columns; "yaml" and "json" are PackageRevision objects, one
// object for a single named revision, else a List as kubectl prints.
func WriteRevisions(w io.Writer, rows []Revision, format string, single bool) error {
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
			v = rows[0].Object()
		} else {
			items := make([]PackageRevisionObject, len(rows))
			for i, r := range rows {
				items[i] = r.Object()
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
			return fmt.Errorf("writing package revisions as %s: %w", format, err)
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("-o %q: expected table, yaml or json", format)
}
