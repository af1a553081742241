package github

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github/githubtest"
)

// TestAppResolvesInstallationsAgainstGitHub runs the App's resolver
// against the fake GitHub in App mode, which checks the App's JWT and the
// installation tokens as GitHub does: each repository resolves to its own
// installation's client, reads and pushes carry that installation's
// token, and a repository outside every installation does not resolve.
func TestAppResolvesInstallationsAgainstGitHub(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	siteA := forge.Repo{Forge: forge.GitHub, FullName: "acme/site-a", DefaultBranch: "main"}
	siteB := forge.Repo{Forge: forge.GitHub, FullName: "other/site-b", DefaultBranch: "main"}
	stray := forge.Repo{Forge: forge.GitHub, FullName: "acme/stray", DefaultBranch: "main"}
	for _, r := range []forge.Repo{siteA, siteB, stray} {
		gh.Seed(r, "main", map[string][]byte{"Kptfile": []byte("kind: Kptfile\n")})
	}
	app := gh.EnableApp(4242, "acme-kptbot")
	gh.Install(7, siteA.FullName)
	gh.Install(8, siteB.FullName)
	a, err := NewAppForge(app.ID, app.PrivateKeyPEM, gh.URL, func(c *Client, _ int64) { c.GitURL = gh.GitURL })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if login, err := a.Login(ctx); err != nil || login != "acme-kptbot[bot]" {
		t.Fatalf("Login = %q, %v", login, err)
	}
	for _, r := range []forge.Repo{siteA, siteB} {
		f, err := a.For(ctx, r)
		if err != nil {
			t.Fatalf("For(%s): %v", r.FullName, err)
		}
		if data, err := f.ReadFile(ctx, r, "main", "Kptfile"); err != nil || string(data) != "kind: Kptfile\n" {
			t.Fatalf("ReadFile(%s) = %q, %v", r.FullName, data, err)
		}
		if _, err := f.PushFiles(ctx, r, "draft", "", "main", map[string][]byte{"a.yaml": []byte("a: 1\n")}, "push"); err != nil {
			t.Fatalf("PushFiles(%s) over git with the installation token: %v", r.FullName, err)
		}
	}
	if gh.Minted(7) != 1 || gh.Minted(8) != 1 {
		t.Errorf("tokens minted: installation 7 %d, 8 %d; want one each (cached)", gh.Minted(7), gh.Minted(8))
	}
	if _, err := a.For(ctx, stray); err == nil {
		t.Error("For(a repository in no installation) succeeded")
	}
	repos, err := a.ListRepos(ctx)
	if err != nil || len(repos) != 2 || repos[0].FullName != siteA.FullName || repos[1].FullName != siteB.FullName {
		t.Errorf("ListRepos = %+v, %v; want the two installations' repositories", repos, err)
	}
	for _, e := range gh.AuthLog() {
		want := "installation:"
		if strings.HasPrefix(e.Path, "/app") || strings.HasSuffix(e.Path, "/installation") {
			want = "app"
		}
		if !strings.HasPrefix(e.Identity, want) {
			t.Errorf("%s %s authenticated as %q, want %s", e.Method, e.Path, e.Identity, want)
		}
	}
	// An installation's client cannot reach another installation's
	// repository: GitHub hides it.
	f7, _ := a.For(ctx, siteA)
	if _, err := f7.ReadFile(ctx, siteB, "main", "Kptfile"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("installation 7 reading installation 8's repository: %v, want ErrNotFound", err)
	}
}

// TestAppModeRefusesAForeignKey: a JWT signed with another key is refused
// as GitHub refuses it, so the fake's App mode checks signatures.
func TestAppModeRefusesAForeignKey(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	gh.Seed(forge.Repo{FullName: "acme/site-a"}, "main", map[string][]byte{"a": []byte("a")})
	app := gh.EnableApp(4242, "acme-kptbot")
	gh.Install(7, "acme/site-a")
	other := githubtest.New(t).EnableApp(4242, "impostor")
	a, err := NewAppForge(app.ID, other.PrivateKeyPEM, gh.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Login(context.Background()); err == nil {
		t.Fatal("a JWT signed with another key was accepted")
	}
	if _, err := a.For(context.Background(), forge.Repo{FullName: "acme/site-a"}); err == nil {
		t.Fatal("an installation was found with a JWT signed by another key")
	}
	if gh.Minted(7) != 0 {
		t.Error("a token was minted for a foreign key")
	}
}
