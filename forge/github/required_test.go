package github

import (
	"context"
	"reflect"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github/githubtest"
)

// TestRequiredChecks: the checks a protected branch requires are read from
// the branch listing (a request GitHub's OpenAPI description allows, as
// the fake checks), and an unprotected branch requires none.
func TestRequiredChecks(t *testing.T) {
	f := githubtest.New(t)
	c, err := NewClient(nil, f.URL)
	if err != nil {
		t.Fatal(err)
	}
	r := forge.Repo{Forge: forge.GitHub, FullName: "acme/site", DefaultBranch: "main"}
	f.Seed(r, "main", map[string][]byte{"README.md": []byte("x")})
	f.Seed(r, "dev", map[string][]byte{"README.md": []byte("y")})
	ctx := context.Background()
	if got, err := c.RequiredChecks(ctx, r, "main"); err != nil || len(got) != 0 {
		t.Fatalf("unprotected main: RequiredChecks = %v, %v; want none", got, err)
	}
	f.Protect(r, "main", "kptbot/team-ns", "ci/lint")
	if got, err := c.RequiredChecks(ctx, r, "main"); err != nil || !reflect.DeepEqual(got, []string{"kptbot/team-ns", "ci/lint"}) {
		t.Fatalf("protected main: RequiredChecks = %v, %v; want each name once", got, err)
	}
	if got, err := c.RequiredChecks(ctx, r, "dev"); err != nil || len(got) != 0 {
		t.Fatalf("dev: RequiredChecks = %v, %v; want none (only main is protected)", got, err)
	}
}
