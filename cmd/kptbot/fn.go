package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins"
	"github.com/kptbot/kptbot/engine/fnresults"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/render"
	"github.com/spf13/cobra"
)

type runtimeFlags struct {
	allowExec       bool
	allowContainers bool
	imagePrefix     string
}

func (f *runtimeFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.allowExec, "allow-exec", false, "allow running exec: function binaries")
	cmd.Flags().BoolVar(&f.allowContainers, "allow-containers", true, "allow running non-built-in images with docker or podman when one is on PATH")
	cmd.Flags().StringVar(&f.imagePrefix, "image-prefix", render.DefaultImagePrefix, "registry prefix for images given without one")
}

func (f *runtimeFlags) runtimes() render.Runtimes {
	return render.Runtimes{AllowExec: f.allowExec, AllowContainers: f.allowContainers}
}

func newFnRenderCmd() *cobra.Command {
	var rf runtimeFlags
	var resultsDir, output string
	cmd := &cobra.Command{
		Use:   "render [PKG_PATH]",
		Short: "Render a package's function pipeline (like kpt fn render), built-in functions need no Docker",
		Long: `Render a package: run the Kptfile pipelines (mutators then validators) of the
package and its subpackages, in kpt's order, and write the result in place.
Built-in functions run in-process (see "kptbot fn list"); exec functions need
--allow-exec; other images run with docker or podman when present.
The package changes only if the whole pipeline succeeds; the root Kptfile
records a Rendered condition either way.

-o stdout|unwrap|DIR writes the result there instead of in place.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) > 0 {
				dir = args[0]
			}
			opts := render.RenderOptions{Runtimes: rf.runtimes(), ImagePrefix: rf.imagePrefix}
			out := cmd.OutOrStdout()
			var res *render.RenderResult
			var err error
			if output == "" {
				res, err = render.Render(cmd.Context(), dir, opts)
			} else {
				var have kptpkg.Tree
				if have, err = kptpkg.ReadTree(dir); err == nil {
					res, err = render.RenderTree(cmd.Context(), have, opts)
				}
			}
			var results *fnresults.List
			if res != nil {
				results = res.Results
			}
			reportResults(cmd.ErrOrStderr(), results)
			if resultsDir != "" {
				if p, werr := render.WriteResults(resultsDir, results); werr != nil {
					return werr
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "For complete results, see %s\n", p)
				}
			}
			if err != nil {
				return err
			}
			switch output {
			case "":
				fmt.Fprintf(out, "Successfully rendered %s: %d file(s) changed.\n", dir, len(res.Added)+len(res.Removed)+len(res.Modified))
			case "stdout":
				return render.WriteResources(out, res.Tree, true)
			case "unwrap":
				return render.WriteResources(out, res.Tree, false)
			default:
				if _, serr := os.Stat(output); serr == nil {
					entries, _ := os.ReadDir(output)
					if len(entries) > 0 {
						return fmt.Errorf("-o %s: directory exists and is not empty", output)
					}
				}
				return res.Tree.Write(output)
			}
			return nil
		},
	}
	rf.add(cmd)
	cmd.Flags().StringVar(&resultsDir, "results-dir", "", "directory to write the functions' results (results.yaml) to")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the output to stdout (as a ResourceList), unwrap (plain YAML) or a directory, instead of in place")
	return cmd
}

// reportResults prints kpt-style per-function lines.
func reportResults(w io.Writer, results *fnresults.List) {
	if results == nil {
		return
	}
	for _, r := range results.Items {
		name := r.Image
		if name == "" {
			name = r.ExecPath
		}
		status := "PASS"
		if r.ExitCode != 0 {
			status = "FAIL"
		}
		fmt.Fprintf(w, "[%s] %q\n", status, name)
		for _, item := range r.Results {
			line := item.Message
			if item.Severity != "" {
				line = fmt.Sprintf("[%s] %s", strings.ToLower(string(item.Severity)), line)
			}
			if item.ResourceRef != nil {
				line += fmt.Sprintf(" in object %q", item.ResourceRef.Kind+"/"+item.ResourceRef.Name)
			}
			if item.Field != nil && item.Field.Path != "" {
				line += fmt.Sprintf(" in field %q", item.Field.Path)
			}
			fmt.Fprintf(w, "  Results: %s\n", line)
		}
		if r.Stderr != "" {
			fmt.Fprintf(w, "  Stderr:\n    %s\n", strings.ReplaceAll(strings.TrimSpace(r.Stderr), "\n", "\n    "))
		}
	}
}

func newFnListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the built-in functions and the versions they answer to",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%-24s %-28s %s\n", "FUNCTION", "VERSIONS", "DESCRIPTION")
			for _, f := range builtins.All() {
				fmt.Fprintf(out, "%-24s %-28s %s\n", f.Name, strings.Join(f.Versions, ", "), f.Description)
			}
			fmt.Fprintln(out, "\nImages match with or without the ghcr.io/kptdev/krm-functions-catalog/ or gcr.io/kpt-fn/ prefix;")
			fmt.Fprintln(out, "a tag vX.Y or vX.Y.Z matches when vX.Y is listed; no tag, latest and unstable match too.")
			return nil
		},
	}
}
