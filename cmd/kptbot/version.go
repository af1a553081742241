package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Build metadata, set by the linker (make build, the Dockerfile: -ldflags
// "-X main.version=v1.2.3 -X main.commit=<sha> -X main.date=<RFC 3339>"):
// the one kind of package-level variable there is, never assigned.
var (
	version = "dev"
	commit  = "unknown"
	date    = "unknown"
)

// versionInfo is what `kptbot version` reports.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Date     string `json:"date"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// resolveVersion fills what the linker left at its default from the build
// information Go records itself: the module version of `go install
// github.com/kptbot/kptbot/cmd/kptbot@v1.2.3`, and the VCS revision and
// time of a build inside a git checkout.
func resolveVersion(version, commit, date string, bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: version, Commit: commit, Date: date, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return v
	}
	if v.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if v.Commit == "unknown" && settings["vcs.revision"] != "" {
		v.Commit = settings["vcs.revision"]
		if settings["vcs.modified"] == "true" {
			v.Commit += "-dirty"
		}
	}
	if v.Date == "unknown" && settings["vcs.time"] != "" {
		v.Date = settings["vcs.time"]
	}
	return v
}

func newVersionCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version [-o json]",
		Short: "Print kptbot's version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			v := resolveVersion(version, commit, date, bi)
			switch output {
			case "json":
				return writeJSONTo(cmd.OutOrStdout(), v)
			case "text", "":
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "kptbot %s (commit %s, built %s, %s %s)\n", v.Version, v.Commit, v.Date, v.Go, v.Platform)
				return err
			}
			return fmt.Errorf("-o %q: expected text or json", output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}
