package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kptbot/kptbot/gitstore"
	"github.com/spf13/cobra"
	sigsyaml "sigs.k8s.io/yaml"
)

func rpkgGet() *cobra.Command {
	var f rpkgFlags
	var output string
	cmd := &cobra.Command{
		Use:     "get [NAME|PACKAGE] --repository URL [-o table|yaml|json]",
		Aliases: []string{"list"},
		Short:   "List package revisions (porchctl's columns; -o yaml|json for PackageRevision objects)",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.repo == "" {
				return errRepoRequired
			}
			rows, warnings, err := gitstore.Revisions(cmd.Context(), f.repo, f.branch)
			if err != nil {
				return err
			}
			single := false
			if len(args) == 1 {
				var keep []gitstore.Revision
				for _, r := range rows {
					if r.Name == args[0] || r.Package == args[0] {
						keep = append(keep, r)
						single = single || r.Name == args[0]
					}
				}
				if len(keep) == 0 {
					return fmt.Errorf("%w: no package revision or package %q in %s", gitstore.ErrNotFound, args[0], f.repo)
				}
				rows = keep
			}
			for _, warn := range warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", warn)
			}
			return printRevisions(cmd.OutOrStdout(), rows, output, single)
		},
	}
	f.add(cmd, false, false)
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table, yaml or json")
	return cmd
}

// printRevisions writes rows as porchctl does: a table with its columns,
// or YAML/JSON objects (one object for a single named revision, else a
// List, as kubectl prints).
func printRevisions(w io.Writer, rows []gitstore.Revision, format string, single bool) error {
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
			items := make([]gitstore.PackageRevisionObject, len(rows))
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
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("-o %q: expected table, yaml or json", format)
}
