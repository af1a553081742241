// Package dashboard renders the dashboard issue the bot keeps per
// repository: Porch's package view for humans (each package's latest
// revision, drafts, proposals, pending upstream updates, paused), the
// fan-out sections and the last errors.
package dashboard

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/check"
	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/porch"
	"github.com/kptbot/kptbot/review"
)

// Label marks the dashboard issue the bot keeps per repository.
const Label = "kptbot-dashboard"

// Title is the dashboard issue's title.
const Title = "kptbot dashboard"

// Input is what a dashboard shows and where it reads the rest.
type Input struct {
	F    forge.Forge
	Repo forge.Repo
	// Directory is the repository's package directory (porch's layout).
	Directory string
	// Login is the bot's own account: only its changes' markers count.
	Login    string
	Variants []config.PackageVariant
	// FanOut are the fan-out sections by package, rendered by the fan-out.
	FanOut map[string]string
	Errors []Error
}

// Error is one of the last errors the dashboard lists.
type Error struct {
	Package, File, Message string
}

// FanOutHeading starts each fan-out section of a dashboard (package
// fanout renders them): the bot finds them by it to keep them.
const FanOutHeading = "\n### Fan-out of "

// errorsHeading starts the section after the fan-outs.
const errorsHeading = "\n### Last errors"

// KeptFanOut is the fan-out sections of a dashboard body, "" when none.
func KeptFanOut(body string) string {
	i := strings.Index(body, FanOutHeading)
	if i < 0 {
		return ""
	}
	rest := body[i:]
	if j := strings.Index(rest, errorsHeading); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

type dashRow struct {
	latest    int
	drafts    []string
	proposals []string
	updates   []string
	paused    bool
}

// Body renders the dashboard and says how many things it shows that the
// repository's list of pull requests does not (see worthShowing).
func Body(ctx context.Context, in Input) (string, int, error) {
	rows, err := gather(ctx, in)
	if err != nil {
		return "", 0, err
	}
	text, shown := write(in, rows)
	return text, shown, nil
}

// gather reads what the dashboard shows, one row per package: the
// packages on the default branch, their latest revisions, and the open
// changes that draft, propose or update them.
func gather(ctx context.Context, in Input) (map[string]*dashRow, error) {
	snap, err := in.F.ReadTree(ctx, in.Repo, in.Repo.DefaultBranch, "")
	if err != nil {
		return nil, err
	}
	rows := map[string]*dashRow{}
	for _, d := range porch.PackagesIn(in.Directory, snap.Files) {
		rows[porch.PackagePath(in.Directory, d)] = &dashRow{}
	}
	tags, err := in.F.ListTags(ctx, in.Repo)
	if err != nil {
		return nil, err
	}
	latest := porch.LatestByPackage(tags, func(t forge.Tag) string { return t.Name })
	for name, r := range rows {
		r.latest = latest[name]
	}
	changes, err := in.F.ListOpenChanges(ctx, in.Repo)
	if err != nil {
		return nil, err
	}
	row := func(p string) *dashRow {
		if rows[p] == nil {
			rows[p] = &dashRow{}
		}
		return rows[p]
	}
	for _, c := range changes {
		// Only the bot's own changes carry a marker it trusts: a person
		// can write one into their pull request's description.
		if m, ok := review.ParseMarker(c.Body); ok && m.Variant != "" && review.IsSelf(c.Author, in.Login) {
			r := row(m.Package)
			r.updates = append(r.updates, fmt.Sprintf("#%d", c.Number))
			r.paused = r.paused || m.Paused
			continue
		}
		comments, err := in.F.ListComments(ctx, in.Repo, c.Number)
		if err != nil {
			return nil, err
		}
		st := review.FindStatus(comments, in.Login).State
		for _, p := range st.Packages {
			r := row(p)
			link := fmt.Sprintf("#%d", c.Number)
			if c.Draft {
				r.drafts = append(r.drafts, link)
			} else {
				r.proposals = append(r.proposals, link)
			}
			r.paused = r.paused || st.Paused
		}
	}
	for _, pv := range in.Variants {
		if r := rows[pv.Spec.Downstream.Package]; r != nil && pv.Spec.Paused {
			r.paused = true
		}
	}
	return rows, nil
}

// write is the text for the gathered rows, and how many of its
// entries are worth an issue of their own (worthShowing).
func write(in Input, rows map[string]*dashRow) (string, int) {
	names := make([]string, 0, len(rows))
	shown := len(in.FanOut) + len(in.Errors)
	downstream := map[string]bool{}
	for _, pv := range in.Variants {
		downstream[strings.Trim(pv.Spec.Downstream.Package, "/")] = true
	}
	for n, r := range rows {
		names = append(names, n)
		if worthShowing(r, downstream[n]) {
			shown++
		}
	}
	sort.Strings(names)
	var s strings.Builder
	fmt.Fprintf(&s, "Packages in `%s` on `%s`, kept by kptbot. Edit nothing here: the bot rewrites this issue.\n\n", in.Repo.FullName, in.Repo.DefaultBranch)
	s.WriteString("| package | latest revision | drafts | proposed | pending upstream updates | paused |\n|---|---|---|---|---|---|\n")
	for _, n := range names {
		r := rows[n]
		latest := "—"
		if r.latest > 0 {
			latest = review.Code(porch.Tag(n, r.latest))
		}
		paused := ""
		if r.paused {
			paused = "⏸"
		}
		fmt.Fprintf(&s, "| %s | %s | %s | %s | %s | %s |\n", review.Code(n), latest, strings.Join(r.drafts, " "), strings.Join(r.proposals, " "), strings.Join(r.updates, " "), paused)
	}
	pkgs := make([]string, 0, len(in.FanOut))
	for p := range in.FanOut {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		s.WriteString(in.FanOut[p])
	}
	var errs []string
	for _, p := range in.Errors {
		errs = append(errs, fmt.Sprintf("- %s %s: %s", review.Code(p.Package), review.UserText(p.File), review.UserText(check.Truncate(p.Message, 300))))
	}
	if len(errs) > 0 {
		s.WriteString(errorsHeading + "\n\n" + strings.Join(errs, "\n") + "\n")
	}
	return s.String(), shown
}

// worthShowing says whether a package's row tells people something their
// pull request list does not, which is when a repository without a
// dashboard gets one (one write in its life, not one per fan-out): the
// repository's own packages (Porch's package view of an upstream), a
// published revision, a person's draft or proposal, a pause. A follower
// whose only news is the bot's open update changes (each visible as a
// pull request) gets no issue yet, as Renovate's dashboard is what lists
// what is pending, held or failing, not a second copy of the open PRs.
func worthShowing(r *dashRow, variantDownstream bool) bool {
	return !variantDownstream || r.latest > 0 || len(r.drafts) > 0 || len(r.proposals) > 0 || r.paused
}
