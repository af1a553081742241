package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/kptbot/kptbot/engine"
	"github.com/kptbot/kptbot/engine/kptpkg"
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
		if f.repo == "" && strings.Contains(args[0], ".") {
			return errRepoRequired // a name needs the repository to look it up
		}
		pkg, row, err := gitstore.ResolveName(cmd.Context(), f.repo, f.branch, args[0])
		if err != nil {
			return err
		}
		args[0] = pkg
		// Set what the name says as flags (unless given), so the verb sees
		// --revision as given (v0 is a revision) or --workspace.
		switch {
		case row == nil:
		case row.Published() && !cmd.Flags().Changed("revision") && cmd.Flags().Lookup("revision") != nil:
			err = cmd.Flags().Set("revision", strconv.Itoa(row.Revision))
		case !row.Published() && f.workspace == "":
			f.workspace = row.Workspace
		}
		return err
	}
}

// revisionArg is --revision when given, else the latest revision.
func (f *rpkgFlags) revisionArg(cmd *cobra.Command) (int, error) {
	if !cmd.Flags().Changed("revision") {
		return gitstore.Latest, nil
	}
	if f.revision < 0 {
		return 0, fmt.Errorf("--revision %d: a published revision number is 0 or more", f.revision)
	}
	return f.revision, nil
}

func (f *rpkgFlags) store(ctx context.Context) (*gitstore.Store, error) {
	if f.repo == "" {
		return nil, errRepoRequired
	}
	s, err := gitstore.OpenStore(ctx, f.repo, f.branch)
	if err != nil {
		return nil, err
	}
	s.Author = gitstore.PersonAuthor()
	return s, nil
}

func (f *rpkgFlags) needWorkspace() error {
	if f.workspace == "" {
		return fmt.Errorf("--workspace is required: the draft's workspace name (or name the revision: repository.package.workspace, as rpkg get lists it)")
	}
	return nil
}

// verb is an rpkg verb: its usage, the shared flags it takes, whether
// PACKAGE may be a revision name, and what must be given before the
// repository is opened (check; default: --workspace).
type verb struct {
	use, short                 string
	args                       int
	workspace, revision, names bool
	check                      func(cmd *cobra.Command, f *rpkgFlags, args []string) error
}

// command builds the verb: run gets the opened store and the arguments,
// and returns what it did.
func (v verb) command(run func(cmd *cobra.Command, f *rpkgFlags, s *gitstore.Store, args []string) (string, error)) *cobra.Command {
	f := &rpkgFlags{}
	cmd := &cobra.Command{
		Use:   v.use,
		Short: v.short,
		Args:  cobra.ExactArgs(v.args),
		RunE: func(cmd *cobra.Command, args []string) error {
			check := v.check
			if check == nil {
				check = func(*cobra.Command, *rpkgFlags, []string) error { return f.needWorkspace() }
			}
			if err := check(cmd, f, args); err != nil {
				return err
			}
			s, err := f.store(cmd.Context())
			if err != nil {
				return err
			}
			said, err := run(cmd, f, s, args)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), said)
			return nil
		},
	}
	f.add(cmd, v.workspace, v.revision)
	if v.names {
		f.acceptNames(cmd)
	}
	return cmd
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

func rpkgInit() *cobra.Command {
	var opts engine.InitOptions
	cmd := verb{use: "init PACKAGE --repo URL --workspace WS", short: "Create a new package as a draft", args: 1, workspace: true}.command(
		func(cmd *cobra.Command, f *rpkgFlags, s *gitstore.Store, args []string) (string, error) {
			commit, err := s.InitDraft(cmd.Context(), args[0], f.workspace, opts)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s/%s created as a draft (%s)", args[0], f.workspace, commit[:12]), nil
		})
	cmd.Flags().StringVar(&opts.Description, "description", "sample description", "short description of the package")
	cmd.Flags().StringSliceVar(&opts.Keywords, "keywords", nil, "keywords")
	cmd.Flags().StringVar(&opts.Site, "site", "", "link to the package's documentation")
	return cmd
}

func rpkgClone() *cobra.Command {
	var opts engine.GetOptions
	var sf sourceFlags
	cmd := verb{use: "clone REPO_URI[.git]/PKG_PATH[@VERSION] PACKAGE --repo URL --workspace WS", args: 2, workspace: true,
		short: "Create a draft by cloning an upstream package (kpt pkg get into the repository)",
		check: func(_ *cobra.Command, f *rpkgFlags, args []string) error {
			ref, err := fetch.ParseRef(args[0], fetch.IsLocalRepo)
			if err != nil {
				return err
			}
			opts.Repo, opts.Dir, opts.Version = ref.Repo, ref.Dir, ref.Version
			return f.needWorkspace()
		},
	}.command(func(cmd *cobra.Command, f *rpkgFlags, s *gitstore.Store, args []string) (string, error) {
		src, err := sf.client()
		if err != nil {
			return "", err
		}
		commit, up, err := s.CloneDraft(cmd.Context(), src, args[1], f.workspace, opts)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s/%s cloned from %s as a draft (%s)", args[1], f.workspace, up.Describe(), commit[:12]), nil
	})
	cmd.Flags().BoolVar(&opts.ForDeployment, "for-deployment", false, "generate package-context.yaml")
	sf.register(cmd)
	return cmd
}

func rpkgCopy() *cobra.Command {
	return verb{use: "copy PACKAGE --repo URL --revision N --workspace WS", short: "Start a new draft from a published revision (to edit it)",
		args: 1, workspace: true, revision: true, names: true,
	}.command(func(cmd *cobra.Command, f *rpkgFlags, s *gitstore.Store, args []string) (string, error) {
		// --revision N (v0 is a revision too), or the latest.
		n, err := f.revisionArg(cmd)
		if err != nil {
			return "", err
		}
		if n, err = s.CopyDraft(cmd.Context(), args[0], f.workspace, n); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s/%s created from %s", args[0], f.workspace, porch.Tag(args[0], n)), nil
	})
}

func rpkgPull() *cobra.Command {
	return verb{use: "pull (PACKAGE (--workspace WS | --revision N) | NAME) DIR --repository URL", args: 2, workspace: true, revision: true, names: true,
		short: "Write a package revision's files (a draft's, or a published revision's) to a local directory",
		check: func(cmd *cobra.Command, f *rpkgFlags, _ []string) error {
			if f.workspace == "" && !cmd.Flags().Changed("revision") {
				return f.needWorkspace()
			}
			return nil
		},
	}.command(func(cmd *cobra.Command, f *rpkgFlags, s *gitstore.Store, args []string) (string, error) {
		var files kptpkg.Tree
		var err error
		what := args[0] + "/" + f.workspace
		if f.workspace != "" {
			files, err = s.Draft(cmd.Context(), args[0], f.workspace)
		} else if _, err = f.revisionArg(cmd); err == nil {
			_, files, err = s.Published(cmd.Context(), args[0], f.revision)
			what = porch.Tag(args[0], f.revision)
		}
		if err != nil {
			return "", err
		}
		if entries, err := os.ReadDir(args[1]); err == nil && len(entries) > 0 {
			return "", fmt.Errorf("%s exists and is not empty", args[1])
		}
		if err := files.Write(args[1]); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s pulled into %s (%d files)", what, args[1], len(files)), nil
	})
}

func rpkgPush() *cobra.Command {
	return verb{use: "push PACKAGE DIR --repo URL --workspace WS", short: "Replace a draft's files with a local directory's (re-rendered)",
		args: 2, workspace: true, names: true,
	}.command(func(cmd *cobra.Command, f *rpkgFlags, s *gitstore.Store, args []string) (string, error) {
		files, err := kptpkg.ReadTree(args[1])
		if err != nil {
			return "", err
		}
		commit, err := s.PushDraft(cmd.Context(), args[0], f.workspace, files)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s/%s updated (%s)", args[0], f.workspace, commit[:12]), nil
	})
}

func rpkgUpgrade() *cobra.Command {
	var opts gitstore.UpgradeOptions
	var sf sourceFlags
	cmd := verb{use: "upgrade (PACKAGE|NAME) --repository URL --workspace WS [--revision N] [--to VERSION]", args: 1, workspace: true, revision: true, names: true,
		short: "Merge a newer upstream into a draft (3-way, like kpt pkg update); from a published revision, into a new draft WS in one step",
	}.command(func(cmd *cobra.Command, f *rpkgFlags, s *gitstore.Store, args []string) (string, error) {
		var err error
		if opts.Revision, err = f.revisionArg(cmd); err != nil {
			return "", err
		}
		src, err := sf.client()
		if err != nil {
			return "", err
		}
		up, err := s.Upgrade(cmd.Context(), src, args[0], f.workspace, opts)
		if err != nil {
			return "", err
		}
		said := fmt.Sprintf("%s/%s upgraded to %s", args[0], f.workspace, up.To)
		if up.From != "" {
			said = fmt.Sprintf("%s/%s created from %s and upgraded to %s", args[0], f.workspace, up.From, up.To)
		}
		for _, c := range up.Conflicts {
			said += "\n" + strings.TrimSuffix(c.Format("  ", "conflict: "), "\n")
		}
		return said, nil
	})
	cmd.Long = `Merges a newer upstream revision into a package (3-way: local edits kept,
conflicts listed). When WS is an existing draft, the draft is upgraded in
place. Otherwise the draft WS is created from a published revision (the one
NAME names, --revision N, or the latest) with the upgrade already merged,
as porchctl's upgrade does.`
	cmd.Flags().StringVar(&opts.Version, "to", "", "upstream version (default: the Kptfile's upstream ref)")
	cmd.Flags().StringVar(&opts.Strategy, "strategy", "", "update strategy")
	sf.register(cmd)
	return cmd
}

func rpkgTransition(name, short string, op func(*gitstore.Store, context.Context, string, string) error) *cobra.Command {
	return verb{use: name + " PACKAGE --repo URL --workspace WS", short: short, args: 1, workspace: true, names: true}.command(
		func(cmd *cobra.Command, f *rpkgFlags, s *gitstore.Store, args []string) (string, error) {
			if err := op(s, cmd.Context(), args[0], f.workspace); err != nil {
				return "", err
			}
			return fmt.Sprintf("%s/%s: %s done", args[0], f.workspace, name), nil
		})
}

func rpkgApprove() *cobra.Command {
	return verb{use: "approve PACKAGE --repo URL --workspace WS", short: "Publish a proposal: commit it onto the registered branch and tag <package>/v<N>",
		args: 1, workspace: true, names: true,
	}.command(func(cmd *cobra.Command, f *rpkgFlags, s *gitstore.Store, args []string) (string, error) {
		n, err := s.Approve(cmd.Context(), args[0], f.workspace)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s/%s published as %s", args[0], f.workspace, porch.Tag(args[0], n)), nil
	})
}

func rpkgProposeDelete() *cobra.Command {
	return verb{use: "propose-delete PACKAGE --repo URL --revision N", short: "Propose deleting a published revision", args: 1, revision: true, names: true,
		check: func(cmd *cobra.Command, f *rpkgFlags, _ []string) error {
			if !cmd.Flags().Changed("revision") || f.revision < 0 {
				return fmt.Errorf("--revision is required: the published revision number")
			}
			return nil
		},
	}.command(func(cmd *cobra.Command, f *rpkgFlags, s *gitstore.Store, args []string) (string, error) {
		if err := s.ProposeDelete(cmd.Context(), args[0], f.revision); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s proposed for deletion (branch %s; rpkg del to delete it)", porch.Tag(args[0], f.revision), porch.DeletionProposedBranch(args[0], f.revision)), nil
	})
}

func rpkgDel() *cobra.Command {
	return verb{use: "del PACKAGE --repo URL (--workspace WS | --revision N)", args: 1, workspace: true, revision: true, names: true,
		short: "Delete a draft or proposal, or a published revision proposed for deletion",
		check: func(cmd *cobra.Command, f *rpkgFlags, _ []string) error {
			if (f.workspace == "") == (!cmd.Flags().Changed("revision") || f.revision < 0) {
				return fmt.Errorf("exactly one of --workspace (a draft or proposal) and --revision (a published revision) is required")
			}
			return nil
		},
	}.command(func(cmd *cobra.Command, f *rpkgFlags, s *gitstore.Store, args []string) (string, error) {
		if f.workspace != "" {
			if err := s.DeleteDraft(cmd.Context(), args[0], f.workspace); err != nil {
				return "", err
			}
			return fmt.Sprintf("%s/%s deleted", args[0], f.workspace), nil
		}
		if err := s.DeletePublished(cmd.Context(), args[0], f.revision); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s deleted", porch.Tag(args[0], f.revision)), nil
	})
}
