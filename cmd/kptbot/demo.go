package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgetest"
	"github.com/kptbot/kptbot/server"
)

// The bot demo runs the real bot on an in-memory forge: the same
// bot.Handle the server, the Action and replay use, with the events a
// forge would send, so a new user sees the whole flow with no account.

const demoKptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: basens
info:
  description: a tenant namespace
pipeline:
  mutators:
    - image: set-labels:v0.2.0
      configMap:
        tier: tenant
`

func demoNamespace(quota string) string {
	return `apiVersion: v1
kind: Namespace
metadata:
  name: example
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: default
  namespace: example
spec:
  hard:
    cpu: "` + quota + `"
`
}

func demoVariant(site string) string {
	return fmt.Sprintf(`apiVersion: kptbot.dev/v1alpha1
kind: PackageVariant
metadata:
  name: tenant-%[1]s
spec:
  upstream: {repo: acme/blueprints, package: basens}
  downstream: {package: tenant-ns}
  labels: {site: %[1]s}
`, site)
}

type demo struct {
	ctx  context.Context
	w    io.Writer
	fake *forgetest.Fake
	bot  *bot.Bot
}

func (d *demo) step(format string, args ...any) {
	fmt.Fprintf(d.w, "\n== "+format+"\n", args...)
}

// handle sends one event to the bot and prints what it did.
func (d *demo) handle(ev forge.Event) {
	ev.Forge = forge.GitHub
	out, err := d.bot.Handle(d.ctx, ev)
	if err != nil {
		fmt.Fprintf(d.w, "   error: %v\n", err)
	}
	for _, c := range out.Opened {
		fmt.Fprintf(d.w, "   opened   %s#%d  %s\n", c.Repo, c.Number, c.Title)
	}
	for _, c := range out.Updated {
		fmt.Fprintf(d.w, "   updated  %s#%d  %s\n", c.Repo, c.Number, c.Title)
	}
	for _, c := range out.Checks {
		fmt.Fprintf(d.w, "   check    %s %s@%.7s: %s\n", c.Repo, c.Name, c.SHA, c.Conclusion)
	}
	for _, c := range out.Merged {
		fmt.Fprintf(d.w, "   merged   %s#%d\n", c.Repo, c.Number)
	}
	for _, t := range out.Tags {
		fmt.Fprintf(d.w, "   tagged   %s %s at %.7s\n", t.Repo, t.Name, t.SHA)
	}
}

// humanChange pushes files on a branch and opens a draft as author.
func (d *demo) humanChange(r forge.Repo, author, branch, title string, files map[string][]byte) forge.Change {
	if _, err := d.fake.PushFiles(d.ctx, r, branch, "", "main", files, title); err != nil {
		panic(err) // the in-memory forge cannot refuse a new branch
	}
	c, err := d.fake.OpenChange(d.ctx, r, forge.ChangeSpec{Head: branch, Base: "main", Title: title, Draft: true})
	if err != nil {
		panic(err)
	}
	d.fake.SetAuthor(r, c.Number, forge.User{Login: author})
	c.Author = forge.User{Login: author}
	fmt.Fprintf(d.w, "   %s opens draft %s#%d %q\n", author, r.FullName, c.Number, title)
	d.handle(forge.Event{Kind: forge.EventChangeOpened, Repo: r, Sender: c.Author, Change: &c})
	return c
}

func (d *demo) comment(r forge.Repo, c forge.Change, who, body string) {
	fmt.Fprintf(d.w, "   %s comments %q on %s#%d\n", who, body, r.FullName, c.Number)
	cm := d.fake.AddComment(r, c.Number, forge.User{Login: who}, body)
	d.handle(forge.Event{Kind: forge.EventCommentCreated, Repo: r, Sender: cm.Author, Change: &c, Comment: &cm})
	if cs := d.fake.Comments(r, c.Number); len(cs) > 0 {
		last := cs[len(cs)-1]
		if last.Author.Bot && !strings.Contains(last.Body, "kptbot-state") {
			fmt.Fprintf(d.w, "   kptbot replies: %s\n", firstLine(last.Body))
		}
	}
}

func (d *demo) approve(r forge.Repo, n int, who string) {
	c, _ := d.fake.GetChange(d.ctx, r, n)
	fmt.Fprintf(d.w, "   %s approves %s#%d at %.7s\n", who, r.FullName, n, c.HeadSHA)
	rv := forge.Review{State: forge.ReviewApproved, Reviewer: forge.User{Login: who}, CommitSHA: c.HeadSHA}
	d.fake.Review(r, n, rv)
	d.handle(forge.Event{Kind: forge.EventReviewSubmitted, Repo: r, Sender: rv.Reviewer, Change: &c, Review: &rv})
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func newDemoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Run the bot end to end on an in-memory forge: a draft proposed, approved, published, and fanned out to three sites",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), cmd.OutOrStdout())
		},
	}
}

func runDemo(ctx context.Context, w io.Writer) error {
	fake := forgetest.New()
	up := forge.Repo{Forge: forge.GitHub, FullName: "acme/blueprints", DefaultBranch: "main"}
	fake.Seed(up, "main", map[string][]byte{"README.md": []byte("# blueprints\n")})
	sites := []string{"edge-1", "edge-2", "edge-3"}
	for _, s := range sites {
		r := forge.Repo{Forge: forge.GitHub, FullName: "acme/" + s, DefaultBranch: "main"}
		fake.Seed(r, "main", map[string][]byte{"kptbot.yaml": []byte(demoVariant(s))})
		fake.Perms[r.FullName+":carol"] = forge.PermissionWrite
	}
	for _, u := range []string{"alice", "bob"} {
		fake.Perms[up.FullName+":"+u] = forge.PermissionWrite
	}
	b, err := server.NewDemoBot(forge.Static(fake), fake.BotLogin)
	if err != nil {
		return err
	}
	d := &demo{ctx: ctx, w: w, fake: fake, bot: b}

	d.step("alice drafts the basens package in acme/blueprints (Draft = a draft PR)")
	c := d.humanChange(up, "alice", "basens-v1", "basens: a tenant namespace", map[string][]byte{
		"basens/Kptfile": []byte(demoKptfile), "basens/ns.yaml": []byte(demoNamespace("4"))})
	d.step("alice proposes it (Proposed = ready for review); she cannot approve her own change")
	d.comment(up, c, "alice", "/kptbot propose")
	d.comment(up, c, "alice", "/kptbot approve")
	d.step("bob approves: the bot merges the approved SHA, tags basens/v1, and fans out to every site following basens")
	d.approve(up, c.Number, "bob")

	d.step("carol approves the clone change in acme/edge-1: published as tenant-ns/v1")
	e1 := forge.Repo{Forge: forge.GitHub, FullName: "acme/edge-1", DefaultBranch: "main"}
	d.approve(e1, 1, "carol")

	d.step("bob raises the quota upstream; alice approves: basens/v2, and the sites' changes follow")
	c2 := d.humanChange(up, "bob", "quota", "basens: more cpu", map[string][]byte{"basens/ns.yaml": []byte(demoNamespace("8"))})
	d.comment(up, c2, "bob", "/kptbot propose")
	d.approve(up, c2.Number, "alice")

	d.step("the upstream dashboard issue (kept by the bot)")
	if issues, err := fake.ListIssues(ctx, up, bot.DashboardLabel); err == nil && len(issues) > 0 {
		fmt.Fprintln(w, issues[0].Body)
	}
	return nil
}
