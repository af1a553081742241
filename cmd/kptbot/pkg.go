package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/engine/pkgmerge"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/locator"
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
			dest, err := getDestination(args, ref)
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
				fmt.Fprintf(out, "Fetched %s\n", describe(p))
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

// getDestination applies kpt's rule: an existing directory receives a new
// subdirectory named after the package; otherwise the path itself is used.
func getDestination(args []string, ref fetch.Ref) (string, error) {
	dest := "."
	if len(args) > 1 {
		dest = args[1]
	}
	dest, err := filepath.Abs(dest)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(dest)
	if err != nil {
		if os.IsNotExist(err) {
			return dest, nil
		}
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("destination %s exists and is not a directory", dest)
	}
	base := filepath.Base(ref.Dir)
	switch {
	case locator.Store(ref.Repo) != locator.Git:
		base = locator.DefaultName(locator.Ref(ref))
	case ref.Dir == "/":
		base = filepath.Base(strings.TrimSuffix(strings.TrimSuffix(ref.Repo, "/"), ".git"))
	}
	return filepath.Join(dest, base), nil
}

// splitPkgArg splits PKG_PATH[@VERSION] (default ".").
func splitPkgArg(args []string) (dir, version string) {
	dir = "."
	if len(args) > 0 {
		dir = args[0]
	}
	if i := strings.LastIndex(dir, "@"); i >= 0 {
		dir, version = dir[:i], dir[i+1:]
		if dir == "" {
			dir = "."
		}
	}
	return dir, version
}

// packageName names a package of an update as kpt does: the root by its
// directory's name (never "."), a subpackage by its path below the root's
// parent directory ("team-a/db").
func packageName(root, sub string) string {
	name := filepath.Base(root)
	if abs, err := filepath.Abs(root); err == nil {
		name = filepath.Base(abs)
	}
	if sub == "" || sub == "." {
		return name
	}
	return name + "/" + filepath.ToSlash(sub)
}

// formatConflict prints one conflict on one line when both values are
// scalars; a list or other multi-line value is printed as an indented
// YAML block under "local:" and "upstream:", so it reads as YAML.
func formatConflict(indent, label string, c pkgmerge.Conflict) string {
	if !strings.Contains(c.Local, "\n") && !strings.Contains(c.Upstream, "\n") {
		return indent + label + c.String() + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s%s: %s: %s (upstream kept):\n", indent, label, c.File, c.Resource, c.Field)
	for _, v := range []struct{ side, value string }{{"local", c.Local}, {"upstream", c.Upstream}} {
		fmt.Fprintf(&b, "%s  %s:\n", indent, v.side)
		for _, line := range strings.Split(strings.TrimRight(v.value, "\n"), "\n") {
			fmt.Fprintf(&b, "%s    %s\n", indent, line)
		}
	}
	return b.String()
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
			dir, version := splitPkgArg(args)
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
				fmt.Fprintf(out, "Updated package %q from %s\n", packageName(dir, p.Path), describe(p))
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
					fmt.Fprint(out, formatConflict("  ", "", c))
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
