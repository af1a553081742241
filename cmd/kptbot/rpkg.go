package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/forge/gitrepo"
	"github.com/kptbot/kptbot/porch"
	"github.com/spf13/cobra"
)

// rpkgFlags are the flags porchctl's rpkg verbs share, adapted to a plain
// git repository.
type rpkgFlags struct {
	repo, branch, workspace string
	revision                int
}

func (f *rpkgFlags) add(cmd *cobra.Command, workspace, revision bool) {
	cmd.Flags().StringVar(&f.repo, "repo", "", "the repository: a local path, file:// or http(s) URL (required)")
	cmd.Flags().StringVar(&f.branch, "branch", "main", "the registered branch")
	if workspace {
		cmd.Flags().StringVar(&f.workspace, "workspace", "", "the draft's workspace name (required)")
	}
	if revision {
		cmd.Flags().IntVar(&f.revision, "revision", 0, "the published revision number")
	}
}

func (f *rpkgFlags) store(ctx context.Context) (*gitrepo.Store, error) {
	if f.repo == "" {
		return nil, fmt.Errorf("--repo is required: the repository (local path, file:// or http(s) URL)")
	}
	s, err := gitrepo.OpenStore(ctx, f.repo, f.branch)
	if err != nil {
		return nil, err
	}
	// rpkg commits are a person's: sign them as that person, so the
	// variant reconciler (which signs as kptbot) knows to leave them alone.
	s.Author = personAuthor()
	return s, nil
}

// personAuthor is the git identity of whoever runs the CLI: GIT_AUTHOR_NAME
// and GIT_AUTHOR_EMAIL, else the global git config, else user@host.
func personAuthor() object.Signature {
	name, email := os.Getenv("GIT_AUTHOR_NAME"), os.Getenv("GIT_AUTHOR_EMAIL")
	if name == "" || email == "" {
		if cfg, err := gitconfig.LoadConfig(gitconfig.GlobalScope); err == nil {
			name, email = firstNonEmpty(name, cfg.User.Name), firstNonEmpty(email, cfg.User.Email)
		}
	}
	if email == "" {
		host, _ := os.Hostname()
		u := os.Getenv("USER")
		email = firstNonEmpty(u, "user") + "@" + firstNonEmpty(host, "localhost")
	}
	return object.Signature{Name: firstNonEmpty(name, email), Email: email}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// workspaceStore opens the repository for a verb that needs --workspace.
func (f *rpkgFlags) workspaceStore(ctx context.Context) (*gitrepo.Store, error) {
	if err := f.needWorkspace(); err != nil {
		return nil, err
	}
	return f.store(ctx)
}

func (f *rpkgFlags) needWorkspace() error {
	if f.workspace == "" {
		return fmt.Errorf("--workspace is required: the draft's workspace name")
	}
	return nil
}

func newRpkgCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rpkg",
		Short: "Package revisions in a repository, with Porch's lifecycle (like porchctl rpkg)",
		Long: `Manage package revisions in a git repository with Porch's layout: drafts on
drafts/<package>/<workspace>, proposals on proposed/<package>/<workspace>,
published revisions as tags <package>/v<N> on the registered branch. Every
change to a draft re-renders the package with the built-in functions.`,
	}
	cmd.AddCommand(rpkgGet(), rpkgInit(), rpkgClone(), rpkgCopy(), rpkgPull(), rpkgPush(), rpkgUpgrade(),
		rpkgTransition("propose", "Propose a draft for publishing", (*gitrepo.Store).Propose),
		rpkgTransition("reject", "Send a proposal back to draft", (*gitrepo.Store).Reject),
		rpkgApprove(), rpkgProposeDelete(), rpkgDel())
	return cmd
}

func rpkgGet() *cobra.Command {
	var f rpkgFlags
	cmd := &cobra.Command{
		Use:   "get [PACKAGE] --repo URL",
		Short: "List package revisions",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.repo == "" {
				return fmt.Errorf("--repo is required")
			}
			repo, err := fetch.Open(cmd.Context(), f.repo)
			if err != nil {
				return err
			}
			l, err := gitrepo.List(cmd.Context(), repo, f.branch)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "PACKAGE\tWORKSPACE\tREVISION\tLIFECYCLE\tCOMMIT")
			for _, p := range l.Packages {
				if len(args) == 1 && p.Name != args[0] {
					continue
				}
				for _, r := range p.Revisions {
					rev, ws := "-", dash(r.Workspace)
					if r.Lifecycle == porch.Published || r.Lifecycle == porch.DeletionProposed {
						rev = porch.RevisionName(r.Revision)
					}
					if r.Trailer != nil && r.Trailer.WorkspaceName != "" && ws == "-" {
						ws = r.Trailer.WorkspaceName
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", p.Name, ws, rev, r.Lifecycle, r.Commit[:12])
				}
			}
			for _, warn := range l.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", warn)
			}
			return w.Flush()
		},
	}
	f.add(cmd, false, false)
	return cmd
}

// renderFiles renders a package held in memory with the built-in
// functions (exec and containers never run on a repository's behalf).
func renderFiles(ctx context.Context, files engine.Tree) (engine.Tree, error) {
	if _, ok := files[engine.KptfileName]; !ok {
		return nil, fmt.Errorf("not a kpt package: no Kptfile")
	}
	res, err := engine.RenderTree(ctx, files, engine.RenderOptions{})
	if err != nil {
		return nil, fmt.Errorf("rendering the package: %w", err)
	}
	return res.Tree, nil
}

func rpkgInit() *cobra.Command {
	var f rpkgFlags
	var opts engine.InitOptions
	cmd := &cobra.Command{
		Use:   "init PACKAGE --repo URL --workspace WS",
		Short: "Create a new package as a draft",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.workspaceStore(cmd.Context())
			if err != nil {
				return err
			}
			tmp, err := os.MkdirTemp("", "kptbot-rpkg-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			pkgDir := filepath.Join(tmp, filepath.Base(args[0]))
			if _, err := engine.Init(pkgDir, opts); err != nil {
				return err
			}
			files, err := engine.ReadTree(pkgDir)
			if err != nil {
				return err
			}
			commit, err := s.CreateDraft(cmd.Context(), args[0], f.workspace, files, porch.InitTask(opts.Description).JSON())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s/%s created as a draft (%s)\n", args[0], f.workspace, commit[:12])
			return nil
		},
	}
	f.add(cmd, true, false)
	cmd.Flags().StringVar(&opts.Description, "description", "sample description", "short description of the package")
	cmd.Flags().StringSliceVar(&opts.Keywords, "keywords", nil, "keywords")
	cmd.Flags().StringVar(&opts.Site, "site", "", "link to the package's documentation")
	return cmd
}

func rpkgClone() *cobra.Command {
	var f rpkgFlags
	var forDeployment bool
	var sf sourceFlags
	cmd := &cobra.Command{
		Use:   "clone REPO_URI[.git]/PKG_PATH[@VERSION] PACKAGE --repo URL --workspace WS",
		Short: "Create a draft by cloning an upstream package (kpt pkg get into the repository)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := fetch.ParseRef(args[0], fetch.IsLocalRepo)
			if err != nil {
				return err
			}
			s, err := f.workspaceStore(cmd.Context())
			if err != nil {
				return err
			}
			tmp, err := os.MkdirTemp("", "kptbot-rpkg-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			pkgDir := filepath.Join(tmp, filepath.Base(args[1]))
			src, err := sf.client()
			if err != nil {
				return err
			}
			res, err := engine.Get(cmd.Context(), src, pkgDir, engine.GetOptions{Repo: ref.Repo, Dir: ref.Dir, Version: ref.Version, ForDeployment: forDeployment})
			if err != nil {
				return err
			}
			files, err := engine.ReadTree(pkgDir)
			if err != nil {
				return err
			}
			if files, err = renderFiles(cmd.Context(), files); err != nil {
				return err
			}
			up := res.Packages[0]
			commit, err := s.CreateDraft(cmd.Context(), args[1], f.workspace, files, up.CloneTask().JSON())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s/%s cloned from %s as a draft (%s)\n", args[1], f.workspace, describe(up), commit[:12])
			return nil
		},
	}
	f.add(cmd, true, false)
	cmd.Flags().BoolVar(&forDeployment, "for-deployment", false, "generate package-context.yaml")
	sf.register(cmd)
	return cmd
}

func rpkgCopy() *cobra.Command {
	var f rpkgFlags
	cmd := &cobra.Command{
		Use:   "copy PACKAGE --repo URL --revision N --workspace WS",
		Short: "Start a new draft from a published revision (to edit it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.workspaceStore(cmd.Context())
			if err != nil {
				return err
			}
			refs, err := s.Repo().Refs()
			if err != nil {
				return err
			}
			// --revision N, or the latest published revision.
			n, i := porch.LatestOf(args[0], refs, func(r fetch.GitRef) string { return r.Name })
			if cmd.Flags().Changed("revision") { // v0 is a revision too
				n, i = f.revision, slices.IndexFunc(refs, func(r fetch.GitRef) bool { return r.Name == porch.TagRef(args[0], f.revision) })
			}
			if i < 0 {
				return fmt.Errorf("%w: %s has no published revision %d", gitrepo.ErrNotFound, args[0], f.revision)
			}
			files, err := s.Repo().Tree(cmd.Context(), refs[i].Commit, "/"+args[0])
			if err != nil {
				return err
			}
			if _, err := s.CreateDraft(cmd.Context(), args[0], f.workspace, files, porch.EditTask(porch.Tag(args[0], n)).JSON()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s/%s created from %s\n", args[0], f.workspace, porch.Tag(args[0], n))
			return nil
		},
	}
	f.add(cmd, true, true)
	return cmd
}

// draftFiles reads a draft's package files.
func draftFiles(ctx context.Context, s *gitrepo.Store, pkg, ws string) (engine.Tree, error) {
	refs, err := s.Repo().Refs()
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		if r.Name == porch.BranchRef(porch.DraftBranch(pkg, ws)) {
			files, err := s.Repo().Tree(ctx, r.Commit, "/"+pkg)
			return engine.Tree(files), err
		}
	}
	return nil, fmt.Errorf("%w: no draft %s/%s (branch %s)", gitrepo.ErrNotFound, pkg, ws, porch.DraftBranch(pkg, ws))
}

func rpkgPull() *cobra.Command {
	var f rpkgFlags
	cmd := &cobra.Command{
		Use:   "pull PACKAGE DIR --repo URL --workspace WS",
		Short: "Write a draft's files to a local directory for editing",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.workspaceStore(cmd.Context())
			if err != nil {
				return err
			}
			files, err := draftFiles(cmd.Context(), s, args[0], f.workspace)
			if err != nil {
				return err
			}
			if entries, err := os.ReadDir(args[1]); err == nil && len(entries) > 0 {
				return fmt.Errorf("%s exists and is not empty", args[1])
			}
			return files.Write(args[1])
		},
	}
	f.add(cmd, true, false)
	return cmd
}

func rpkgPush() *cobra.Command {
	var f rpkgFlags
	cmd := &cobra.Command{
		Use:   "push PACKAGE DIR --repo URL --workspace WS",
		Short: "Replace a draft's files with a local directory's (re-rendered)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.workspaceStore(cmd.Context())
			if err != nil {
				return err
			}
			files, err := engine.ReadTree(args[1])
			if err != nil {
				return err
			}
			if files, err = renderFiles(cmd.Context(), files); err != nil {
				return err
			}
			commit, err := s.UpdateDraft(cmd.Context(), args[0], f.workspace, files, porch.TypeTask(porch.TaskTypePatch).JSON())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s/%s updated (%s)\n", args[0], f.workspace, commit[:12])
			return nil
		},
	}
	f.add(cmd, true, false)
	return cmd
}

func rpkgUpgrade() *cobra.Command {
	var f rpkgFlags
	var version, strategy string
	var sf sourceFlags
	cmd := &cobra.Command{
		Use:   "upgrade PACKAGE --repo URL --workspace WS [--to VERSION]",
		Short: "Merge a newer upstream into a draft (3-way, like kpt pkg update)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.workspaceStore(cmd.Context())
			if err != nil {
				return err
			}
			files, err := draftFiles(cmd.Context(), s, args[0], f.workspace)
			if err != nil {
				return err
			}
			tmp, err := os.MkdirTemp("", "kptbot-rpkg-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			if err := files.Write(tmp); err != nil {
				return err
			}
			src, err := sf.client()
			if err != nil {
				return err
			}
			res, err := engine.Update(cmd.Context(), src, tmp, engine.UpdateOptions{Version: version, Strategy: strategy})
			if err != nil {
				return err
			}
			merged, err := engine.ReadTree(tmp)
			if err != nil {
				return err
			}
			if merged, err = renderFiles(cmd.Context(), merged); err != nil {
				return err
			}
			if _, err := s.UpdateDraft(cmd.Context(), args[0], f.workspace, merged, porch.TypeTask(porch.TaskTypeUpdate).JSON()); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%s/%s upgraded to %s\n", args[0], f.workspace, res.Packages[0].Resolved.Ref)
			for _, c := range res.Conflicts {
				fmt.Fprintf(out, "  conflict: %s\n", c)
			}
			return nil
		},
	}
	f.add(cmd, true, false)
	cmd.Flags().StringVar(&version, "to", "", "upstream version (default: the Kptfile's upstream ref)")
	cmd.Flags().StringVar(&strategy, "strategy", "", "update strategy")
	sf.register(cmd)
	return cmd
}

func rpkgTransition(name, short string, op func(*gitrepo.Store, context.Context, string, string) error) *cobra.Command {
	var f rpkgFlags
	cmd := &cobra.Command{
		Use:   name + " PACKAGE --repo URL --workspace WS",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.workspaceStore(cmd.Context())
			if err != nil {
				return err
			}
			if err := op(s, cmd.Context(), args[0], f.workspace); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s/%s: %s done\n", args[0], f.workspace, name)
			return nil
		},
	}
	f.add(cmd, true, false)
	return cmd
}

func rpkgApprove() *cobra.Command {
	var f rpkgFlags
	cmd := &cobra.Command{
		Use:   "approve PACKAGE --repo URL --workspace WS",
		Short: "Publish a proposal: commit it onto the registered branch and tag <package>/v<N>",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.workspaceStore(cmd.Context())
			if err != nil {
				return err
			}
			n, err := s.Approve(cmd.Context(), args[0], f.workspace)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s/%s published as %s\n", args[0], f.workspace, porch.Tag(args[0], n))
			return nil
		},
	}
	f.add(cmd, true, false)
	return cmd
}

func rpkgProposeDelete() *cobra.Command {
	var f rpkgFlags
	cmd := &cobra.Command{
		Use:   "propose-delete PACKAGE --repo URL --revision N",
		Short: "Propose deleting a published revision",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("revision") || f.revision < 0 {
				return fmt.Errorf("--revision is required: the published revision number")
			}
			s, err := f.store(cmd.Context())
			if err != nil {
				return err
			}
			return s.ProposeDelete(cmd.Context(), args[0], f.revision)
		},
	}
	f.add(cmd, false, true)
	return cmd
}

func rpkgDel() *cobra.Command {
	var f rpkgFlags
	cmd := &cobra.Command{
		Use:   "del PACKAGE --repo URL (--workspace WS | --revision N)",
		Short: "Delete a draft or proposal, or a published revision proposed for deletion",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (f.workspace == "") == (!cmd.Flags().Changed("revision") || f.revision < 0) {
				return fmt.Errorf("exactly one of --workspace (a draft or proposal) and --revision (a published revision) is required")
			}
			s, err := f.store(cmd.Context())
			if err != nil {
				return err
			}
			if f.workspace != "" {
				return s.DeleteDraft(cmd.Context(), args[0], f.workspace)
			}
			return s.DeletePublished(cmd.Context(), args[0], f.revision)
		},
	}
	f.add(cmd, true, true)
	return cmd
}
