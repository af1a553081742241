package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/render"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/gitstore"
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
	// porchctl says --repository; --repo is kept.
	cmd.Flags().StringVar(&f.repo, "repository", "", "the repository: a local path, file:// or http(s) URL (required)")
	cmd.Flags().StringVar(&f.repo, "repo", "", "the same as --repository")
	cmd.Flags().StringVar(&f.branch, "branch", "main", "the registered branch")
	if workspace {
		cmd.Flags().StringVar(&f.workspace, "workspace", "", "the draft's workspace name (required)")
	}
	if revision {
		cmd.Flags().IntVar(&f.revision, "revision", 0, "the published revision number")
	}
}

// errRepoRequired says how to name the repository.
var errRepoRequired = fmt.Errorf("--repository (or --repo) is required: the repository (local path, file:// or http(s) URL)")

// acceptNames lets the verb's first argument be a package revision name
// (repository.package.workspace, as rpkg get lists them) instead of
// PACKAGE with --workspace or --revision: before the verb runs, the name
// is looked up and replaced by its package, and the flags are set.
func (f *rpkgFlags) acceptNames(cmd *cobra.Command) {
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		pkg, row, err := f.resolve(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		args[0] = pkg
		// Set what the name says as flags (unless given), so the verb sees
		// --revision as given (v0 is a revision) or --workspace.
		switch {
		case row == nil:
		case row.published() && !cmd.Flags().Changed("revision") && cmd.Flags().Lookup("revision") != nil:
			err = cmd.Flags().Set("revision", strconv.Itoa(row.Revision))
		case !row.published() && f.workspace == "":
			f.workspace = row.Workspace
		}
		return err
	}
}

func (f *rpkgFlags) store(ctx context.Context) (*gitstore.Store, error) {
	if f.repo == "" {
		return nil, errRepoRequired
	}
	s, err := gitstore.OpenStore(ctx, f.repo, f.branch)
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
func (f *rpkgFlags) workspaceStore(ctx context.Context) (*gitstore.Store, error) {
	if err := f.needWorkspace(); err != nil {
		return nil, err
	}
	return f.store(ctx)
}

func (f *rpkgFlags) needWorkspace() error {
	if f.workspace == "" {
		return fmt.Errorf("--workspace is required: the draft's workspace name (or name the revision: repository.package.workspace, as rpkg get lists it)")
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
		rpkgTransition("propose", "Propose a draft for publishing", (*gitstore.Store).Propose),
		rpkgTransition("reject", "Send a proposal back to draft", (*gitstore.Store).Reject),
		rpkgApprove(), rpkgProposeDelete(), rpkgDel())
	return cmd
}

func rpkgGet() *cobra.Command {
	var f rpkgFlags
	var output string
	cmd := &cobra.Command{
		Use:     "get [NAME|PACKAGE] --repository URL [-o table|yaml|json]",
		Aliases: []string{"list"},
		Short:   "List package revisions (porchctl's columns; -o yaml|json for PackageRevision objects)",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rows, warnings, err := revisionRows(cmd.Context(), &f)
			if err != nil {
				return err
			}
			single := false
			if len(args) == 1 {
				var keep []revisionRow
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

// renderFiles renders a package held in memory with the built-in
// functions (exec and containers never run on a repository's behalf).
func renderFiles(ctx context.Context, files kptpkg.Tree) (kptpkg.Tree, error) {
	if _, ok := files[kptpkg.KptfileName]; !ok {
		return nil, fmt.Errorf("not a kpt package: no Kptfile")
	}
	res, err := render.RenderTree(ctx, files, render.RenderOptions{})
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
			files, err := kptpkg.ReadTree(pkgDir)
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
			files, err := kptpkg.ReadTree(pkgDir)
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
			// --revision N (v0 is a revision too), or the latest.
			n, files, err := publishedFiles(cmd.Context(), s, args[0], f.revision, cmd.Flags().Changed("revision"))
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
	f.acceptNames(cmd)
	return cmd
}

// publishedFiles reads a published revision's package files: revision n
// when given, else the latest.
func publishedFiles(ctx context.Context, s *gitstore.Store, pkg string, n int, given bool) (int, kptpkg.Tree, error) {
	refs, err := s.Repo().Refs()
	if err != nil {
		return 0, nil, err
	}
	latest, i := porch.LatestOf(pkg, refs, func(r fetch.GitRef) string { return r.Name })
	if given {
		latest, i = n, slices.IndexFunc(refs, func(r fetch.GitRef) bool { return r.Name == porch.TagRef(pkg, n) })
	}
	if i < 0 {
		return 0, nil, fmt.Errorf("%w: %s has no published revision %d", gitstore.ErrNotFound, pkg, n)
	}
	files, err := s.Repo().Tree(ctx, refs[i].Commit, "/"+pkg)
	return latest, kptpkg.Tree(files), err
}

// draftFiles reads a draft's package files.
func draftFiles(ctx context.Context, s *gitstore.Store, pkg, ws string) (kptpkg.Tree, error) {
	refs, err := s.Repo().Refs()
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		if r.Name == porch.BranchRef(porch.DraftBranch(pkg, ws)) {
			files, err := s.Repo().Tree(ctx, r.Commit, "/"+pkg)
			return kptpkg.Tree(files), err
		}
	}
	return nil, fmt.Errorf("%w: no draft %s/%s (branch %s)", gitstore.ErrNotFound, pkg, ws, porch.DraftBranch(pkg, ws))
}

func rpkgPull() *cobra.Command {
	var f rpkgFlags
	cmd := &cobra.Command{
		Use:   "pull (PACKAGE (--workspace WS | --revision N) | NAME) DIR --repository URL",
		Short: "Write a package revision's files (a draft's, or a published revision's) to a local directory",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			published := cmd.Flags().Changed("revision")
			if f.workspace == "" && !published {
				return f.needWorkspace()
			}
			s, err := f.store(cmd.Context())
			if err != nil {
				return err
			}
			var files kptpkg.Tree
			what := args[0] + "/" + f.workspace
			if f.workspace != "" {
				files, err = draftFiles(cmd.Context(), s, args[0], f.workspace)
			} else {
				_, files, err = publishedFiles(cmd.Context(), s, args[0], f.revision, true)
				what = porch.Tag(args[0], f.revision)
			}
			if err != nil {
				return err
			}
			if entries, err := os.ReadDir(args[1]); err == nil && len(entries) > 0 {
				return fmt.Errorf("%s exists and is not empty", args[1])
			}
			if err := files.Write(args[1]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s pulled into %s (%d files)\n", what, args[1], len(files))
			return nil
		},
	}
	f.add(cmd, true, true)
	f.acceptNames(cmd)
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
			files, err := kptpkg.ReadTree(args[1])
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
	f.acceptNames(cmd)
	return cmd
}

func rpkgUpgrade() *cobra.Command {
	var f rpkgFlags
	var version, strategy string
	var sf sourceFlags
	cmd := &cobra.Command{
		Use:   "upgrade (PACKAGE|NAME) --repository URL --workspace WS [--revision N] [--to VERSION]",
		Short: "Merge a newer upstream into a draft (3-way, like kpt pkg update); from a published revision, into a new draft WS in one step",
		Long: `Merges a newer upstream revision into a package (3-way: local edits kept,
conflicts listed). When WS is an existing draft, the draft is upgraded in
place. Otherwise the draft WS is created from a published revision (the one
NAME names, --revision N, or the latest) with the upgrade already merged,
as porchctl's upgrade does.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.workspaceStore(cmd.Context())
			if err != nil {
				return err
			}
			pkg, source := args[0], ""
			files, err := draftFiles(cmd.Context(), s, pkg, f.workspace)
			if errors.Is(err, gitstore.ErrNotFound) {
				// No such draft: start it from a published revision.
				var n int
				if n, files, err = publishedFiles(cmd.Context(), s, pkg, f.revision, cmd.Flags().Changed("revision")); err != nil {
					return fmt.Errorf("no draft %s/%s to upgrade, and no published revision to start one from: %w", pkg, f.workspace, err)
				}
				source = porch.Tag(pkg, n)
			}
			if err != nil {
				return err
			}
			tmp, err := os.MkdirTemp("", "kptbot-rpkg-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			dir := filepath.Join(tmp, filepath.Base(pkg))
			if err := files.Write(dir); err != nil {
				return err
			}
			src, err := sf.client()
			if err != nil {
				return err
			}
			res, err := engine.Update(cmd.Context(), src, dir, engine.UpdateOptions{Version: version, Strategy: strategy})
			if err != nil {
				return fmt.Errorf("upgrading %s/%s: %w", pkg, f.workspace, inPackage{err, tmp})
			}
			merged, err := kptpkg.ReadTree(dir)
			if err != nil {
				return err
			}
			if merged, err = renderFiles(cmd.Context(), merged); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			local := source
			if local == "" {
				local = porch.DraftBranch(pkg, f.workspace)
			}
			task := upgradeTask(files, merged, local, strategy).JSON()
			if source == "" {
				if _, err := s.UpdateDraft(cmd.Context(), pkg, f.workspace, merged, task); err != nil {
					return err
				}
				fmt.Fprintf(out, "%s/%s upgraded to %s\n", pkg, f.workspace, res.Packages[0].Resolved.Ref)
			} else {
				if _, err := s.CreateDraft(cmd.Context(), pkg, f.workspace, merged, task); err != nil {
					return err
				}
				fmt.Fprintf(out, "%s/%s created from %s and upgraded to %s\n", pkg, f.workspace, source, res.Packages[0].Resolved.Ref)
			}
			for _, c := range res.Conflicts {
				fmt.Fprint(out, formatConflict("  ", "conflict: ", c))
			}
			return nil
		},
	}
	f.add(cmd, true, true)
	f.acceptNames(cmd)
	cmd.Flags().StringVar(&version, "to", "", "upstream version (default: the Kptfile's upstream ref)")
	cmd.Flags().StringVar(&strategy, "strategy", "", "update strategy")
	sf.register(cmd)
	return cmd
}

// upgradeTask is the Porch upgrade task an upgrade records: local moved
// from the upstream its Kptfile followed before to the one it follows
// after, with the strategy asked for, else the Kptfile's, else Porch's
// default.
func upgradeTask(before, after kptpkg.Tree, local, strategy string) porch.Task {
	origin := func(t kptpkg.Tree) string {
		kf, err := kptpkg.DecodeKptfile(kptpkg.KptfileName, t[kptpkg.KptfileName])
		if err != nil {
			return ""
		}
		if strategy == "" && kf.Upstream != nil {
			strategy = string(kf.Upstream.UpdateStrategy)
		}
		if o, err := kptpkg.UpstreamOf(kf); err == nil && o != nil {
			return o.String()
		}
		return ""
	}
	old, upgraded := origin(before), origin(after)
	if strategy == "" {
		strategy = string(porch.ResourceMerge)
	}
	return porch.UpgradeTask(old, upgraded, local, porch.PackageMergeStrategy(strategy))
}

// inPackage is an error from working on a package in a temporary
// directory, told without that directory: users never saw it.
type inPackage struct {
	err error
	tmp string
}

func (e inPackage) Error() string {
	return strings.ReplaceAll(strings.ReplaceAll(e.err.Error(), e.tmp+string(filepath.Separator), ""), e.tmp, ".")
}

func (e inPackage) Unwrap() error { return e.err }

func rpkgTransition(name, short string, op func(*gitstore.Store, context.Context, string, string) error) *cobra.Command {
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
	f.acceptNames(cmd)
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
	f.acceptNames(cmd)
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
			if err := s.ProposeDelete(cmd.Context(), args[0], f.revision); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s proposed for deletion (branch %s; rpkg del to delete it)\n", porch.Tag(args[0], f.revision), porch.DeletionProposedBranch(args[0], f.revision))
			return nil
		},
	}
	f.add(cmd, false, true)
	f.acceptNames(cmd)
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
				if err := s.DeleteDraft(cmd.Context(), args[0], f.workspace); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s/%s deleted\n", args[0], f.workspace)
				return nil
			}
			if err := s.DeletePublished(cmd.Context(), args[0], f.revision); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s deleted\n", porch.Tag(args[0], f.revision))
			return nil
		},
	}
	f.add(cmd, true, true)
	f.acceptNames(cmd)
	return cmd
}
