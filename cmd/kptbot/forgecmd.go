package main

import (
	"bytes"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/gitlab"
	"github.com/spf13/cobra"
)

// githubFlags are how the CLI authenticates to GitHub: as an App
// installation (--app-id, --installation-id, --private-key) or with a token
// (--token-file, else the variable named by --token-env).
type githubFlags struct {
	baseURL, tokenEnv, tokenFile, keyFile string
	appID, installationID                 int64
}

func (f *githubFlags) register(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.baseURL, "github-url", "", "GitHub API root (GitHub Enterprise Server: https://HOST/api/v3); default api.github.com")
	cmd.PersistentFlags().StringVar(&f.tokenEnv, "token-env", "GITHUB_TOKEN", "environment variable holding a token")
	cmd.PersistentFlags().StringVar(&f.tokenFile, "token-file", "", "file holding a token (instead of --token-env)")
	cmd.PersistentFlags().Int64Var(&f.appID, "app-id", 0, "GitHub App id (with --installation-id and --private-key)")
	cmd.PersistentFlags().Int64Var(&f.installationID, "installation-id", 0, "GitHub App installation id")
	cmd.PersistentFlags().StringVar(&f.keyFile, "private-key", "", "GitHub App private key (PEM file)")
}

func (f *githubFlags) client() (*github.Client, error) {
	if f.appID != 0 || f.installationID != 0 || f.keyFile != "" {
		if f.appID == 0 || f.installationID == 0 || f.keyFile == "" {
			return nil, fmt.Errorf("--app-id, --installation-id and --private-key go together")
		}
		key, err := os.ReadFile(f.keyFile)
		if err != nil {
			return nil, fmt.Errorf("reading --private-key: %w", err)
		}
		return github.NewAppClient(f.appID, f.installationID, key, f.baseURL)
	}
	token, err := readToken(f.tokenEnv, f.tokenFile)
	if err != nil {
		return nil, err
	}
	if token == "" {
		return nil, fmt.Errorf("no GitHub credentials: set %s, or pass --token-file, or --app-id/--installation-id/--private-key", f.tokenEnv)
	}
	return github.NewTokenClient(token, f.baseURL)
}

// readToken reads a token from file when one is given, else from the
// environment variable env ("" when unset).
func readToken(env, file string) (string, error) {
	if file == "" {
		return os.Getenv(env), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("reading --token-file: %w", err)
	}
	return string(bytes.TrimSpace(b)), nil
}

// forgeLister is what the forge commands read, on either forge.
type forgeLister interface {
	forge.RepoLister
	forge.RefLister
}

// forgeFlags choose the forge (--forge) and its credentials: GitHub's
// flags, or for GitLab --gitlab-url and a token (--token-file, else the
// variable named by --token-env, GITLAB_TOKEN unless given).
type forgeFlags struct {
	github    githubFlags
	name      string
	gitlabURL string
}

func (f *forgeFlags) register(cmd *cobra.Command) {
	f.github.register(cmd)
	cmd.PersistentFlags().StringVar(&f.name, "forge", forge.GitHub, "forge to ask: github or gitlab")
	cmd.PersistentFlags().StringVar(&f.gitlabURL, "gitlab-url", "", "GitLab API root (self-managed: https://HOST/api/v4); default gitlab.com")
}

func (f *forgeFlags) client(cmd *cobra.Command) (forgeLister, error) {
	switch f.name {
	case forge.GitHub:
		if f.gitlabURL != "" {
			return nil, fmt.Errorf("--gitlab-url needs --forge gitlab")
		}
		return f.github.client()
	case forge.GitLab:
		if f.github.appID != 0 || f.github.installationID != 0 || f.github.keyFile != "" || f.github.baseURL != "" {
			return nil, fmt.Errorf("--app-id, --installation-id, --private-key and --github-url are GitHub flags; GitLab takes --gitlab-url and a token")
		}
		env := f.github.tokenEnv
		if !cmd.Flags().Changed("token-env") {
			env = "GITLAB_TOKEN"
		}
		token, err := readToken(env, f.github.tokenFile)
		if err != nil {
			return nil, err
		}
		if token == "" {
			return nil, fmt.Errorf("no GitLab credentials: set %s (a project, group or personal access token), or pass --token-file", env)
		}
		return gitlab.NewClient(nil, f.gitlabURL, token)
	default:
		return nil, fmt.Errorf("--forge %q: want github or gitlab", f.name)
	}
}

func newForgeCmd() *cobra.Command {
	var ff forgeFlags
	var output string
	cmd := &cobra.Command{
		Use:   "forge",
		Short: "Check what kptbot's GitHub or GitLab identity can see (credentials smoke test)",
	}
	ff.register(cmd)
	cmd.PersistentFlags().StringVarP(&output, "output", "o", "text", "text or json")
	repos := &cobra.Command{
		Use:   "repos",
		Short: "List the repositories the App installation or token can see (GitLab: the token's projects)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := ff.client(cmd)
			if err != nil {
				return err
			}
			rs, err := c.ListRepos(cmd.Context())
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSONTo(cmd.OutOrStdout(), rs)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "REPOSITORY\tDEFAULT BRANCH\tPRIVATE")
			for _, r := range rs {
				fmt.Fprintf(tw, "%s\t%s\t%v\n", r.FullName, r.DefaultBranch, r.Private)
			}
			return tw.Flush()
		},
	}
	refs := &cobra.Command{
		Use:   "refs OWNER/NAME | GROUP/[SUBGROUP/]PROJECT",
		Short: "List a repository's tags and branches with their commits",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := ff.client(cmd)
			if err != nil {
				return err
			}
			repo := forge.Repo{Forge: ff.name, FullName: args[0]}
			tags, err := c.ListTags(cmd.Context(), repo)
			if err != nil {
				return err
			}
			branches, err := c.ListBranches(cmd.Context(), repo)
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSONTo(cmd.OutOrStdout(), map[string]any{"tags": tags, "branches": branches})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KIND\tNAME\tCOMMIT")
			for _, b := range branches {
				fmt.Fprintf(tw, "branch\t%s\t%s\n", b.Name, b.SHA)
			}
			for _, t := range tags {
				fmt.Fprintf(tw, "tag\t%s\t%s\n", t.Name, t.SHA)
			}
			return tw.Flush()
		},
	}
	cmd.AddCommand(repos, refs)
	return cmd
}
