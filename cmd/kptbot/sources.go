package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/fetch/archive"
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/fetch/oci"
	"github.com/kptbot/kptbot/fetch/sources"
	"github.com/spf13/cobra"
)

// sourceFlags are the flags every command that reads upstreams takes for
// OCI registries and HTTP archives.
type sourceFlags struct {
	insecure []string
	maxBytes int64
	maxFiles int
}

func (s *sourceFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVar(&s.insecure, "insecure-registry", nil,
		"host[:port] of a registry or archive server that may be reached over plain HTTP (loopback always may); repeatable, also "+sources.EnvInsecureHosts)
	f.Int64Var(&s.maxBytes, "max-archive-bytes", 0,
		fmt.Sprintf("most bytes a package archive or OCI layer may unpack to (default %d, also %s)", archive.DefaultMaxBytes, sources.EnvMaxBytes))
	f.IntVar(&s.maxFiles, "max-archive-files", 0,
		fmt.Sprintf("most files a package archive or OCI layer may hold (default %d, also %s)", archive.DefaultMaxFiles, sources.EnvMaxFiles))
}

// client builds the upstream client: git, OCI and HTTP archives.
func (s *sourceFlags) client() (*sources.Client, error) {
	return sources.New(sources.Options{
		InsecureHosts: s.insecure,
		Limits:        archive.Limits{MaxBytes: s.maxBytes, MaxFiles: s.maxFiles},
	})
}

func newPkgPushCmd() *cobra.Command {
	var sf sourceFlags
	var opts oci.PushOptions
	cmd := &cobra.Command{
		Use:   "push oci://REGISTRY/REPO[//PKG_PATH]:TAG [DIR]",
		Short: "Publish a package as an OCI artifact in Porch's layout",
		Long: `Publish the package in DIR (default ".") to an OCI registry, so others can use
it as an upstream without git: one image repository per package
(REGISTRY/REPO/PKG_PATH), the files in one gzip tar layer, and the manifest
annotations kpt.dev/lifecycle (Published) and kpt.dev/revision (the tag when it
is v<N>, or --revision), as Porch's OCI repositories hold packages.

The manifest digest is printed on stdout. The same package always gets the same
digest; a tag that already names other content is refused unless --force.
Credentials come from the Docker config and its credential helpers, or from
KPTBOT_REGISTRY_TOKEN (or _USERNAME/_PASSWORD) for the hosts in
KPTBOT_REGISTRY_HOSTS.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := locator.ParseOCI(args[0])
			if err != nil {
				return err
			}
			if ref.Version == "" || locator.IsDigest(ref.Version) {
				return fmt.Errorf("push %s: a tag is required: oci://REGISTRY/REPO[//PKG_PATH]:TAG", args[0])
			}
			dir := "."
			if len(args) > 1 {
				dir = args[1]
			}
			files, err := kptpkg.ReadTree(dir)
			if err != nil {
				return err
			}
			kf, ok := files[kptpkg.KptfileName]
			if !ok {
				return fmt.Errorf("push: %s has no Kptfile: it is not a kpt package", dir)
			}
			if _, err := kptpkg.DecodeKptfile(dir+"/"+kptpkg.KptfileName, kf); err != nil {
				return err
			}
			src, err := sf.client()
			if err != nil {
				return err
			}
			digest, err := src.OCI.Push(cmd.Context(), ref.Repo, ref.Dir, ref.Version, files, opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Pushed %d file(s) from %s to %s\n", len(files), dir, locator.WithVersion(locator.ResourceID(ref.Repo, ref.Dir), ref.Version))
			fmt.Fprintln(cmd.OutOrStdout(), digest)
			return nil
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&opts.Revision, "revision", "", "kpt.dev/revision annotation (default: the tag when it is v<N>)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "move a tag that already names other content")
	return cmd
}

// listOCI prints the packages and tags of an OCI repository.
func listOCI(cmd *cobra.Command, sf *sourceFlags, repoURL string) error {
	ref, err := locator.ParseOCI(repoURL)
	if err != nil {
		return err
	}
	if ref.Version != "" {
		return fmt.Errorf("--repo %s: name the repository without a tag or digest", repoURL)
	}
	src, err := sf.client()
	if err != nil {
		return err
	}
	pkgs, err := src.OCI.List(cmd.Context(), "oci://"+locator.ImageName(ref.Repo, ref.Dir))
	if err != nil {
		return err
	}
	return printOCIList(cmd.OutOrStdout(), pkgs)
}

func printOCIList(out io.Writer, pkgs []oci.Package) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PACKAGE\tTAG\tREVISION\tLIFECYCLE\tDIGEST")
	for _, p := range pkgs {
		for _, t := range p.Tags {
			tag := t.Tag
			if t.Tag == p.Latest {
				tag += " (latest)"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", p.Name, tag, dash(t.Revision), dash(t.Lifecycle), t.Digest)
		}
	}
	return w.Flush()
}
