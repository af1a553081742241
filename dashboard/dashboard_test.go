package dashboard

import (
	"strings"
	"testing"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
)

// TestWrite holds the dashboard's text and its "worth an issue" count to
// the rows: a variant's downstream with only the bot's update pull request
// is not worth an issue of its own (its pull request list says it all); a
// revision, a person's draft or proposal, a pause, a fan-out section or an
// error is.
func TestWrite(t *testing.T) {
	t.Parallel()
	repo := forge.Repo{FullName: "acme/site-a", DefaultBranch: "main"}
	variant := config.PackageVariant{}
	variant.Spec.Downstream = &config.Downstream{Package: "team-ns"}
	for _, c := range []struct {
		name      string
		in        Input
		rows      map[string]*dashRow
		shown     int
		contains  []string
		forbidden []string
	}{
		{name: "only the bot's update", in: Input{Repo: repo, Variants: []config.PackageVariant{variant}},
			rows: map[string]*dashRow{"team-ns": {updates: []string{"#4"}}}, shown: 0,
			contains: []string{"| `team-ns` | — |  |  | #4 |  |"}},
		{name: "a published revision", in: Input{Repo: repo, Variants: []config.PackageVariant{variant}},
			rows: map[string]*dashRow{"team-ns": {latest: 3}}, shown: 1, contains: []string{"`team-ns/v3`"}},
		{name: "the repository's own package", in: Input{Repo: repo},
			rows: map[string]*dashRow{"apps/web": {}}, shown: 1, contains: []string{"| `apps/web` | — |"}},
		{name: "drafts, proposals and a pause", in: Input{Repo: repo},
			rows: map[string]*dashRow{"a": {drafts: []string{"#1", "#2"}, proposals: []string{"#3"}, paused: true}}, shown: 1,
			contains: []string{"| `a` | — | #1 #2 | #3 |  | ⏸ |"}},
		{name: "fan-out and errors count without rows", in: Input{Repo: repo,
			FanOut: map[string]string{"b": FanOutHeading + "`b/v2`\n", "a": FanOutHeading + "`a/v1`\n"},
			Errors: []Error{{Package: "a", File: "kptbot.yaml", Message: "bad | pipe"}}},
			rows: map[string]*dashRow{}, shown: 3,
			contains:  []string{FanOutHeading + "`a/v1`\n" + FanOutHeading + "`b/v2`\n", errorsHeading, "- `a` "},
			forbidden: []string{"bad | pipe"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			text, shown := write(c.in, c.rows)
			if shown != c.shown {
				t.Errorf("shown = %d, want %d\n%s", shown, c.shown, text)
			}
			if !strings.HasPrefix(text, "Packages in `acme/site-a` on `main`") {
				t.Errorf("text does not start with its heading:\n%s", text)
			}
			for _, s := range c.contains {
				if !strings.Contains(text, s) {
					t.Errorf("text lacks %q:\n%s", s, text)
				}
			}
			for _, s := range c.forbidden {
				if strings.Contains(text, s) {
					t.Errorf("text has %q unescaped:\n%s", s, text)
				}
			}
		})
	}
}
