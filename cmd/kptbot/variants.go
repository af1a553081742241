package main

import (
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/config"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kptbot/kptbot/gitstore"
	"github.com/kptbot/kptbot/reconcile"
	"github.com/kptbot/kptbot/variant"
	"github.com/spf13/cobra"
)

func newVariantsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "variants", Short: "Package variants: reconcile a repository's kptbot.yaml"}
	var repo, branch, output string
	var dryRun bool
	rec := &cobra.Command{
		Use:   "reconcile --repo URL [--dry-run]",
		Short: "Converge every PackageVariant of a repository (clone, upgrade or edit one draft per variant)",
		Long: `Read kptbot.yaml from the registered branch and converge each PackageVariant,
as Porch's PackageVariant controller does: clone a draft when the downstream
package does not exist (adoptionPolicy decides about one that does), upgrade
it (3-way merge, local edits kept) when the upstream has a newer revision,
edit it when the variant's mutations change it. One open draft per variant: a
newer upstream updates that draft (or proposal). A draft someone else edited
is left alone. updatePolicy decides where the revision is left, as the bot
does with its change: draft, propose (proposed/ branch, the default) or
publish (approved: committed onto the registered branch, tagged <pkg>/v<N>);
an upgrade that took upstream's value over local edits (its conflicts are
listed here and in the draft's commit message) or a required injection left
empty stays a draft. Paused variants are reported, not changed. When a
variant is gone, deletionPolicy decides: delete removes its drafts and
proposals and proposes deleting its published package; orphan keeps them.
adoptionPolicy adoptExisting adopts an unowned draft of the package. Idempotent: a second run right after the first does
nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if repo == "" {
				return fmt.Errorf("--repo is required: the repository (local path, file:// or http(s) URL)")
			}
			store, err := gitstore.OpenStore(cmd.Context(), repo, branch)
			if err != nil {
				return err
			}
			plan, err := reconcile.Run(cmd.Context(), store, branch, reconcile.Options{DryRun: dryRun})
			if err != nil && len(plan) == 0 {
				return err
			}
			out := cmd.OutOrStdout()
			if output == "json" {
				if encErr := writeJSONTo(out, plan); encErr != nil {
					return encErr
				}
				return err
			}
			verb := "did"
			if dryRun {
				verb = "would do"
			}
			fmt.Fprintf(out, "%d variant action(s) kptbot %s:\n", len(plan), verb)
			for _, a := range plan {
				ws := ""
				if a.Workspace != "" {
					ws = "/" + a.Workspace
				}
				fmt.Fprintf(out, "  %-14s %s%s (variant %s): %s\n", a.Kind, a.Package, ws, a.Variant, a.Why)
				switch {
				case a.Published != "":
					fmt.Fprintf(out, "  %-14s published as %s (updatePolicy publish)\n", "", a.Published)
				case a.Lifecycle != "":
					fmt.Fprintf(out, "  %-14s left %s\n", "", strings.ToLower(string(a.Lifecycle)))
				}
				if len(a.Blocking) > 0 {
					fmt.Fprintf(out, "  %-14s blocks proposal: %s\n", "", strings.Join(a.Blocking, "; "))
				}
				if note := variant.ConflictsNote(a.Conflicts); note != "" {
					fmt.Fprintf(out, "  %-14s %s\n", "", strings.ReplaceAll(note, "\n", "\n  "+strings.Repeat(" ", 15)))
				}
			}
			return err
		},
	}
	rec.Flags().StringVar(&repo, "repo", "", "the repository (local path, file:// or http(s) URL)")
	rec.Flags().StringVar(&branch, "branch", "main", "the registered branch")
	rec.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan without writing")
	rec.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	cmd.AddCommand(rec, newVariantsExpandCmd())
	return cmd
}

func newVariantsExpandCmd() *cobra.Command {
	var repos []string
	cmd := &cobra.Command{
		Use:   "expand [FILE] --repository NAME[:key=value,...] ...",
		Short: "Print the PackageVariants a file's PackageVariantSets generate",
		Long: `Expand every PackageVariantSet of a kptbot.yaml into PackageVariants, as
Porch's PackageVariantSet controller does (explicit repositories, selectors
over the repositories given with --repository NAME:label=value,..., CEL
templates), and print them as YAML documents.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, b, err := readConfig(args)
			if err != nil {
				return err
			}
			f, err := config.Parse(name, b)
			if err != nil {
				return err
			}
			var in config.ExpandInput
			for _, r := range repos {
				n, labels, _ := strings.Cut(r, ":")
				obj := config.Object{Name: n, Labels: map[string]string{}}
				for _, kv := range strings.Split(labels, ",") {
					if kv == "" {
						continue
					}
					k, v, ok := strings.Cut(kv, "=")
					if !ok {
						return fmt.Errorf("--repository %q: labels must be key=value", r)
					}
					obj.Labels[k] = v
				}
				in.Repositories = append(in.Repositories, obj)
			}
			out := cmd.OutOrStdout()
			for _, set := range f.Sets {
				in.Upstream = config.Object{Name: set.Spec.Upstream.Package}
				pvs, err := config.Expand(set, in)
				if err != nil {
					return err
				}
				for _, pv := range pvs {
					y, err := sigsyaml.Marshal(pv)
					if err != nil {
						return err
					}
					fmt.Fprintf(out, "---\n%s", y)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&repos, "repository", nil, "a repository selectors may match: NAME or NAME:key=value,key=value (repeatable)")
	return cmd
}
