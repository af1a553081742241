package main

import (
	"encoding/json"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolveVersion(t *testing.T) {
	t.Parallel()
	vcs := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/kptbot/kptbot", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"},
		},
	}
	for _, tc := range []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  [3]string
	}{
		{"linker flags win", "v2.0.0", "fff", "2026-05-05T00:00:00Z", vcs, [3]string{"v2.0.0", "fff", "2026-05-05T00:00:00Z"}},
		{"go install and a VCS build", "dev", "unknown", "unknown", vcs, [3]string{"v1.4.0", "0123abc-dirty", "2026-01-02T03:04:05Z"}},
		{"a devel build with -buildvcs=false", "dev", "unknown", "unknown", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, [3]string{"dev", "unknown", "unknown"}},
		{"no build info", "dev", "unknown", "unknown", nil, [3]string{"dev", "unknown", "unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := resolveVersion(tc.version, tc.commit, tc.date, tc.bi)
			if got := [3]string{v.Version, v.Commit, v.Date}; got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if v.Go == "" || !strings.Contains(v.Platform, "/") {
				t.Errorf("go %q, platform %q", v.Go, v.Platform)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	t.Parallel()
	out, stderr, code := kptbot(t, "version")
	if code != 0 || !regexp.MustCompile(`^kptbot \S+ \(commit \S+, built \S+, go\S+ \w+/\w+\)\n$`).MatchString(out) {
		t.Fatalf("version: exit %d, %q %s", code, out, stderr)
	}
	out, _, code = kptbot(t, "version", "-o", "json")
	var v versionInfo
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Version == "" || v.Commit == "" || v.Date == "" {
		t.Fatalf("version -o json: exit %d, %s", code, out)
	}
	if _, stderr, code := kptbot(t, "version", "-o", "yaml"); code == 0 || !strings.Contains(stderr, `-o "yaml"`) {
		t.Errorf("version -o yaml: exit %d, %s", code, stderr)
	}
}

// TestMakefileSetsVersion keeps the Makefile's -X flags and the variables
// they set in step: a renamed variable would silently stay "dev".
func TestMakefileSetsVersion(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"main.version", "main.commit", "main.date"} {
		if !strings.Contains(string(b), "-X "+v+"=") {
			t.Errorf("the Makefile does not set %s with -ldflags -X", v)
		}
	}
	if !regexp.MustCompile(`(?m)^\tgo build -ldflags "\$\(LDFLAGS\)"`).Match(b) {
		t.Error("the Makefile's build target does not pass $(LDFLAGS)")
	}
}
