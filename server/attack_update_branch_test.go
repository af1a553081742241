package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
)

// TestAttackForgedUpdateMarker: dana, a writer on the site repository,
// opens a pull request from the branch the bot uses for a package's
// upstream updates, with commits of her own and a copy of the bot's
// hidden marker in its description naming her head as the bot's last
// push. The marker is text she wrote: the bot must not treat the change as
// its own, so her commit stays the branch's head and her description
// stays hers.
func TestAttackForgedUpdateMarker(t *testing.T) {
	t.Parallel()
	w := newGHWorld(t, 1)
	ctx := context.Background()
	blue := forge.Repo{Forge: forge.GitHub, FullName: "acme/blue", DefaultBranch: "main"}
	site := forge.Repo{Forge: forge.GitHub, FullName: "acme/site", DefaultBranch: "main"}
	w.gh.SetPermission(site, "dana", "write")
	v1 := w.gh.Seed(blue, "main", map[string][]byte{"app/Kptfile": []byte(strings.Replace(pwnKptfile, "pwn", "app", 1)), "app/cm.yaml": []byte(configMap)})
	if err := w.client().CreateTag(ctx, blue, "app/v1", v1, "v1"); err != nil {
		t.Fatal(err)
	}
	follow := "apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: app}\nspec:\n  upstream: {repo: acme/blue, package: app}\n  downstream: {package: app}\n"
	base := w.gh.Seed(site, "main", map[string][]byte{"README.md": []byte("site\n")})

	// Dana's branch and pull request, before the bot has acted.
	const branch = "drafts/app/kptbot-update"
	hers, err := w.client().PushFiles(ctx, site, branch, "", base, map[string][]byte{"app/Kptfile": []byte(strings.Replace(pwnKptfile, "pwn", "app", 1)), "app/mine.yaml": []byte(configMap)}, "dana's own app")
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("My app.\n\n<!-- kptbot: {\"package\":\"app\",\"variant\":\"app\",\"head\":%q} -->", hers)
	c, err := w.client().OpenChange(ctx, site, forge.ChangeSpec{Head: branch, Base: "main", Title: "dana's app", Body: body})
	if err != nil {
		t.Fatal(err)
	}
	w.gh.SetAuthor(site, c.Number, "dana")

	// The site starts following the upstream; then the upstream releases.
	w.commit(site, map[string][]byte{"kptbot.yaml": []byte(follow)})
	v2, err := w.client().PushFiles(ctx, blue, "main", v1, v1, map[string][]byte{"app/more.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: more}\n")}, "v2")
	if err != nil {
		t.Fatal(err)
	}
	w.tag(blue, "app/v2", v2)
	w.pushEvent(site, "refs/heads/main", w.mainOf(site), "alice")

	bs, err := w.client().ListBranches(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.Name == branch && b.SHA != hers {
			t.Errorf("the bot moved dana's branch %s from %s to %s: her commit is gone", branch, hers[:8], b.SHA[:8])
		}
	}
	got, err := w.client().GetChange(ctx, site, c.Number)
	if err != nil {
		t.Fatal(err)
	}
	if got.Body != body || got.Title != "dana's app" {
		t.Errorf("the bot rewrote dana's pull request as its own:\ntitle %q\n%s", got.Title, got.Body)
	}
}
