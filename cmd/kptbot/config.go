package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kptbot/kptbot/config"
	"github.com/spf13/cobra"
)

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "kptbot.yaml: validate, schema"}
	var output string
	validate := &cobra.Command{
		Use:   "validate [FILE]",
		Short: "Validate a kptbot.yaml and report every problem at once",
		Long: `Validate a kptbot.yaml. Without FILE, the first of kptbot.yaml,
.github/kptbot.yaml and .gitlab/kptbot.yaml in the current directory is used.
Every problem is reported with its file, line, document, field path, value
and what was expected; the exit status is 1 when there is any.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, b, err := readConfig(args)
			if err != nil {
				return err
			}
			f, err := config.Parse(name, b)
			out := cmd.OutOrStdout()
			var perr *config.Error
			if output == "json" {
				problems := []config.Problem{}
				if errors.As(err, &perr) {
					problems = perr.Problems
				} else if err != nil {
					return err
				}
				if encErr := writeJSONTo(out, map[string]any{"file": name, "valid": err == nil, "problems": problems}); encErr != nil {
					return encErr
				}
				if err != nil {
					return &exitError{code: 1, err: fmt.Errorf("%s: %d problem(s)", name, len(problems))}
				}
				return nil
			}
			if err != nil {
				return err
			}
			repos := 0
			if f.Repository != nil {
				repos = 1
			}
			fmt.Fprintf(out, "%s: valid: %d Repository, %d PackageVariant(s), %d PackageVariantSet(s)\n", name, repos, len(f.Variants), len(f.Sets))
			return nil
		},
	}
	validate.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	schema := &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of kptbot.yaml (for editors)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := config.Schema()
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return err
		},
	}
	cmd.AddCommand(validate, schema)
	return cmd
}

// readConfig reads the kptbot.yaml named in args, or found by findConfig.
func readConfig(args []string) (string, []byte, error) {
	name, err := findConfig(args)
	if err != nil {
		return "", nil, err
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return name, b, nil
}

func findConfig(args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	for _, c := range config.Locations() {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	wd, _ := os.Getwd()
	return "", fmt.Errorf("no kptbot.yaml in %s: looked for %v", filepath.Clean(wd), config.Locations())
}
