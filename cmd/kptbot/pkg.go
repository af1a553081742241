package main

import (
	"fmt"
	"path/filepath"

	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/engine/pkgmerge"
	"github.com/kptbot/kptbot/fetch"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"github.com/spf13/cobra"
)

func newPkgGetCmd() *cobra.Command {
	var strategy string
	var forDeployment bool
	var sf sourceFlags
	cmd := &cobra.Command{
		Use:   "get REPO_URI[.git]/PKG_PATH[@VERSION] [LOCAL_DEST_DIRECTORY]",
		Short: "Fetch a package from a git repository, an OCI registry or an HTTP archive (like kpt pkg get)",
		Long: `Fetch a package into a new local directory.

REPO_URI is a git URL (https://, file://) or a local path. ".git" marks the end
of the repository; local paths and file:// URLs may omit it. VERSION resolves
the tag <PKG_PATH>/<VERSION> first, then a branch, tag or commit named VERSION;
without it, the default branch is used.

Beyond git:
  oci://REGISTRY/REPO[//PKG_PATH][:TAG|@sha256:DIGEST]
      a package published in Porch's OCI layout (see pkg push); no tag means
      the highest version tag (v<N>, then semver), and updates follow it.
  https://HOST/PATH.tar.gz|.tgz|.zip[//PKG_PATH][@VERSION][#sha256=HEX]
      a release archive; #sha256= must match; a {version} placeholder in the
      URL is filled from @VERSION.
The Kptfile records a generic upstream and a lock holding the manifest digest
or the archive's sha256, so the same bytes are fetched again on update.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := fetch.ParseRef(args[0], fetch.IsLocalRepo)
			if err != nil {
				return err
			}
			dest := "."
			if len(args) > 1 {
				dest = args[1]
			}
			dest, err = engine.Destination(dest, ref)
			if err != nil {
				return err
			}
			src, err := sf.client()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Package %q:\n", filepath.Base(dest))
			res, err := engine.Get(cmd.Context(), src, dest, engine.GetOptions{
				Repo: ref.Repo, Dir: ref.Dir, Version: ref.Version,
				Strategy:      kptfilev1.UpdateStrategyType(strategy),
				ForDeployment: forDeployment,
			})
			if err != nil {
				return err
			}
			for _, p := range res.Packages {
				fmt.Fprintf(out, "Fetched %s\n", p.Describe())
			}
			fmt.Fprintf(out, "\nFetched %d package(s).\n", len(res.Packages))
			if forDeployment {
				fmt.Fprintf(out, "Generated %s for deployment.\n", engine.PackageContextFile)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&strategy, "strategy", string(kptfilev1.ResourceMerge),
		"update strategy recorded in the Kptfile: resource-merge, fast-forward, force-delete-replace or copy-merge")
	cmd.Flags().BoolVar(&forDeployment, "for-deployment", false, "customize the package for deployment (generates package-context.yaml)")
	sf.register(cmd)
	return cmd
}

func newPkgUpdateCmd() *cobra.Command {
	var strategy, output string
	var allowDirty bool
	var sf sourceFlags
	cmd := &cobra.Command{
		Use:   "update [PKG_PATH][@VERSION]",
		Short: "Merge upstream changes into a local package (like kpt pkg update)",
		Long: `Update a local package to a new upstream version with a 3-way merge
(origin = the upstreamLock commit, updated = VERSION or the Kptfile's upstream
ref, local = the package). Pipeline functions merge by name, and every field
where both sides changed and upstream won is reported as a conflict.

For an OCI upstream VERSION is a tag or an @sha256: digest (without it, the
Kptfile's: "latest" follows the highest version tag); for an archive URL with a
{version} placeholder it fills the placeholder. Origin is fetched by the locked
digest and checked byte for byte.

The package must be in a git repository with no uncommitted changes, so the
update can be reviewed and reverted with git (kpt does not check this;
--allow-dirty skips the check).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, version := engine.SplitPackageArg(firstArg(args))
			if output != "text" && output != "json" {
				return fmt.Errorf("--output %q: expected text or json", output)
			}
			if !allowDirty {
				if err := engine.CheckClean(dir); err != nil {
					return err
				}
			}
			src, err := sf.client()
			if err != nil {
				return err
			}
			res, err := engine.Update(cmd.Context(), src, dir, engine.UpdateOptions{Version: version, Strategy: strategy})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if output == "json" {
				if res.Conflicts == nil {
					res.Conflicts = []pkgmerge.Conflict{}
				}
				return writeJSONTo(out, res)
			}
			for _, p := range res.Packages {
				fmt.Fprintf(out, "Updated package %q from %s\n", engine.PackageName(dir, p.Path), p.Describe())
			}
			for _, f := range res.Added {
				fmt.Fprintf(out, "  added    %s\n", f)
			}
			for _, f := range res.Modified {
				fmt.Fprintf(out, "  modified %s\n", f)
			}
			for _, f := range res.Removed {
				fmt.Fprintf(out, "  removed  %s\n", f)
			}
			if len(res.Conflicts) > 0 {
				fmt.Fprintf(out, "\n%d conflict(s): local and upstream both changed these fields; upstream's value was kept:\n", len(res.Conflicts))
				for _, c := range res.Conflicts {
					fmt.Fprint(out, c.Format("  ", ""))
				}
			}
			fmt.Fprintf(out, "\nUpdated %d package(s).\n", len(res.Packages))
			return nil
		},
	}
	cmd.Flags().StringVar(&strategy, "strategy", "", "update strategy: resource-merge (default), fast-forward, force-delete-replace or copy-merge")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json (conflicts for a PR)")
	cmd.Flags().BoolVar(&allowDirty, "allow-dirty", false, "update even if the package has uncommitted changes or is not in a git repository")
	sf.register(cmd)
	return cmd
}

// firstArg is the first argument, "" when there is none.
func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
