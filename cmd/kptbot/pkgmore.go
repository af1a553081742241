package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/gitstore"
	"github.com/kptbot/kptbot/porch"
	"github.com/spf13/cobra"
)

func newPkgInitCmd() *cobra.Command {
	var opts engine.InitOptions
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Initialize a directory as a kpt package (like kpt pkg init)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) > 0 {
				dir = args[0]
			}
			files, err := engine.Init(dir, opts)
			if err != nil {
				return err
			}
			for _, f := range files {
				fmt.Fprintf(cmd.OutOrStdout(), "writing %s\n", f)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Description, "description", "sample description", "short description of the package")
	cmd.Flags().StringSliceVar(&opts.Keywords, "keywords", nil, "list of keywords for the package")
	cmd.Flags().StringVar(&opts.Site, "site", "", "link to the package's documentation")
	return cmd
}

func newPkgDiffCmd() *cobra.Command {
	var opts engine.DiffOptions
	var sf sourceFlags
	cmd := &cobra.Command{
		Use:   "diff [PKG_PATH][@VERSION]",
		Short: "Show changes between a local package and its upstream (like kpt pkg diff)",
		Long: `Show the differences between a local package and its upstream as a unified
diff printed by kptbot itself (no diff tool needed).

--diff-type:
  local     upstream at the locked version → local package (default)
  remote    upstream at the locked version → upstream at VERSION
  combined  upstream at VERSION → local package
  3way      the local and the remote diff, one after the other`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, version := engine.SplitPackageArg(firstArg(args))
			opts.Version = version
			src, err := sf.client()
			if err != nil {
				return err
			}
			out, err := engine.Diff(cmd.Context(), src, dir, opts)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), out)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Type, "diff-type", engine.DiffLocal, "local, remote, combined or 3way")
	cmd.Flags().IntVarP(&opts.Context, "unified", "U", 3, "lines of context")
	sf.register(cmd)
	return cmd
}

func newPkgListCmd() *cobra.Command {
	var repoURL, branch string
	var checkUpstream bool
	var sf sourceFlags
	cmd := &cobra.Command{
		Use:   "list --repo URL",
		Short: "List a repository's packages: latest revision, open drafts and proposals, upstream",
		Long: `List the packages of a git repository laid out as Porch lays it out (tags
<package>/v<N>, drafts/, proposed/ and deletionProposed/ branches): one row per
package with its latest published revision, open drafts and proposals, and the
upstream its latest revision was cloned from, and whether that upstream has a
newer revision. Commits whose kpt trailer cannot be read, and upstreams that
cannot be read, are reported as warnings.

With --repo oci://REGISTRY/REPO, list the packages published below it (image
repositories REPO/PKG, found through the registry's catalog) with each tag's
revision, lifecycle and digest; "(latest)" marks the tag "latest" resolves to.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if repoURL == "" {
				return fmt.Errorf("--repo is required: a git URL, local path or oci://REGISTRY/REPO")
			}
			if locator.Store(repoURL) == locator.OCI {
				return listOCI(cmd, &sf, repoURL)
			}
			repo, err := fetch.Open(cmd.Context(), repoURL)
			if err != nil {
				return err
			}
			l, err := gitstore.List(cmd.Context(), repo, branch)
			if err != nil {
				return err
			}
			if checkUpstream {
				l.CheckUpstreams(cmd.Context(), fetch.NewClient())
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "PACKAGE\tLATEST\tDRAFTS\tPROPOSED\tUPSTREAM\tNEWER UPSTREAM")
			for _, p := range l.Packages {
				latest := "-"
				if p.Published {
					latest = porch.RevisionName(p.Latest)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, latest, dash(strings.Join(p.Drafts, ",")), dash(strings.Join(p.Proposals, ",")), dash(p.Upstream), dash(p.NewerUpstream))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			for _, warn := range l.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", warn)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&repoURL, "repo", "", "the repository (git URL, local path or oci://REGISTRY/REPO)")
	cmd.Flags().StringVar(&branch, "branch", "main", "the registered branch")
	cmd.Flags().BoolVar(&checkUpstream, "check-upstream", true, "read each upstream to report newer revisions")
	sf.register(cmd)
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
