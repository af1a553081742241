package main

import (
	"bytes"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
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
	token := os.Getenv(f.tokenEnv)
	if f.tokenFile != "" {
		b, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("reading --token-file: %w", err)
		}
		token = string(bytes.TrimSpace(b))
	}
	if token == "" {
		return nil, fmt.Errorf("no GitHub credentials: set %s, or pass --token-file, or --app-id/--installation-id/--private-key", f.tokenEnv)
	}
	return github.NewTokenClient(token, f.baseURL)
}

func newForgeCmd() *cobra.Command {
	var gf githubFlags
	var output string
	cmd := &cobra.Command{
		Use:   "forge",
		Short: "Check what kptbot's GitHub identity can see (credentials smoke test)",
	}
	gf.register(cmd)
	cmd.PersistentFlags().StringVarP(&output, "output", "o", "text", "text or json")
	repos := &cobra.Command{
		Use:   "repos",
		Short: "List the repositories the App installation or token can see",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := gf.client()
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
		Use:   "refs OWNER/NAME",
		Short: "List a repository's tags and branches with their commits",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := gf.client()
			if err != nil {
				return err
			}
			repo := forge.Repo{Forge: forge.GitHub, FullName: args[0]}
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
