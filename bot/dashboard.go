package bot

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/porch"
	"github.com/kptbot/kptbot/review"
)

// DashboardLabel marks the dashboard issue the bot keeps per repository.
const DashboardLabel = "kptbot-dashboard"

const dashboardTitle = "kptbot dashboard"

// checkConfig validates a change's kptbot.yaml (the analogue of Porch's
// admission webhook). The change's config is never applied: the bot reads
// its rules from the default branch only.
func (b *Bot) checkConfig(ctx context.Context, w *work, head map[string][]byte) {
	rep := forge.CheckReport{Name: configCheck, HeadSHA: w.ch.HeadSHA, Status: forge.CheckCompleted, Conclusion: forge.CheckSuccess, Title: "kptbot.yaml is valid"}
	rep.Summary = "The new configuration takes effect once merged; until then the default branch's rules apply."
	for _, p := range b.configPaths() {
		data, ok := head[p]
		if !ok {
			continue
		}
		if _, err := config.Parse(p, data); err != nil {
			probs := configProblems(w.rc.repo.FullName, err)
			w.rc.out.Problems = append(w.rc.out.Problems, probs...)
			rep.Conclusion, rep.Title = forge.CheckFailure, "kptbot.yaml is invalid"
			var s strings.Builder
			for _, pr := range probs {
				fmt.Fprintf(&s, "- `%s:%d`: %s\n", pr.File, pr.Line, pr.Message)
			}
			rep.Summary = s.String()
		}
		break
	}
	w.rc.out.Checks = append(w.rc.out.Checks, CheckRef{Repo: w.rc.repo.FullName, Name: rep.Name, SHA: rep.HeadSHA, Conclusion: string(rep.Conclusion), Summary: rep.Title})
	if !b.opts.DryRun {
		if err := w.rc.f.ReportCheck(ctx, w.rc.repo, rep); err != nil {
			w.rc.out.Problems = append(w.rc.out.Problems, Problem{Severity: SeverityWarning, Repo: w.rc.repo.FullName, Message: "reporting the config check: " + err.Error()})
		}
	}
}

// dashboard writes the repository's dashboard issue: Porch's package
// view for humans, edited in place.
func (b *Bot) dashboard(ctx context.Context, rc *repoCtx) error {
	issues, err := rc.f.ListIssues(ctx, rc.repo, DashboardLabel)
	if err != nil {
		return err
	}
	if len(rc.fanOut) == 0 && len(issues) > 0 {
		// The last fan-out's progress stays until the next fan-out
		// replaces it: a resync knows nothing of it, and dropping it
		// would rewrite the issue at every resync.
		if kept := keptFanOut(issues[0].Body); kept != "" {
			rc.fanOut = map[string]string{"": kept}
		}
	}
	body, pkgs, err := b.dashboardBody(ctx, rc)
	if err != nil {
		return err
	}
	if b.opts.DryRun {
		return nil
	}
	if len(issues) == 0 {
		if pkgs == 0 && rc.cfgPath == "" && len(rc.fanOut) == 0 {
			return nil // a repository with nothing of kptbot's gets no issue
		}
		_, err := rc.f.OpenIssue(ctx, rc.repo, dashboardTitle, body, []string{DashboardLabel})
		return err
	}
	if issues[0].Body == body {
		return nil
	}
	return rc.f.EditIssue(ctx, rc.repo, issues[0].Number, dashboardTitle, body)
}

// FanOutHeading starts each fan-out section of a dashboard (package
// fanout renders them): the bot finds them by it to keep them.
const FanOutHeading = "\n### Fan-out of "

// errorsHeading starts the section after the fan-outs.
const errorsHeading = "\n### Last errors"

// keptFanOut is the fan-out sections of a dashboard body, "" when none.
func keptFanOut(body string) string {
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

// dashboardBody renders the dashboard and says how many packages it lists.
func (b *Bot) dashboardBody(ctx context.Context, rc *repoCtx) (string, int, error) {
	snap, err := rc.f.ReadTree(ctx, rc.repo, rc.repo.DefaultBranch, "")
	if err != nil {
		return "", 0, err
	}
	rows := map[string]*dashRow{}
	for _, d := range rc.packagesIn(snap.Files) {
		rows[rc.pkgName(d)] = &dashRow{}
	}
	tags, err := rc.f.ListTags(ctx, rc.repo)
	if err != nil {
		return "", 0, err
	}
	latest := porch.LatestByPackage(tags, func(t forge.Tag) string { return t.Name })
	for name, r := range rows {
		r.latest = latest[name]
	}
	changes, err := rc.f.ListOpenChanges(ctx, rc.repo)
	if err != nil {
		return "", 0, err
	}
	for _, c := range changes {
		// Only the bot's own changes carry a marker it trusts: a person
		// can write one into their pull request's description.
		if m, ok := ParseMarker(c.Body); ok && m.Variant != "" && isSelf(c.Author, b.login(rc.repo.Forge)) {
			r := rows[m.Package]
			if r == nil {
				r = &dashRow{}
				rows[m.Package] = r
			}
			r.updates = append(r.updates, fmt.Sprintf("#%d", c.Number))
			r.paused = r.paused || m.Paused
			continue
		}
		comments, err := rc.f.ListComments(ctx, rc.repo, c.Number)
		if err != nil {
			return "", 0, err
		}
		st := review.FindStatus(comments, b.login(rc.repo.Forge)).State
		for _, p := range st.Packages {
			r := rows[p]
			if r == nil {
				r = &dashRow{}
				rows[p] = r
			}
			link := fmt.Sprintf("#%d", c.Number)
			if c.Draft {
				r.drafts = append(r.drafts, link)
			} else {
				r.proposals = append(r.proposals, link)
			}
			r.paused = r.paused || st.Paused
		}
	}
	for _, pv := range rc.cfg.Variants {
		if r := rows[pv.Spec.Downstream.Package]; r != nil && pv.Spec.Paused {
			r.paused = true
		}
	}
	names := make([]string, 0, len(rows))
	for n := range rows {
		names = append(names, n)
	}
	sort.Strings(names)
	var s strings.Builder
	fmt.Fprintf(&s, "Packages in `%s` on `%s`, kept by kptbot. Edit nothing here: the bot rewrites this issue.\n\n", rc.repo.FullName, rc.repo.DefaultBranch)
	s.WriteString("| package | latest revision | drafts | proposed | pending upstream updates | paused |\n|---|---|---|---|---|---|\n")
	for _, n := range names {
		r := rows[n]
		latest := "—"
		if r.latest > 0 {
			latest = code(porch.Tag(n, r.latest))
		}
		paused := ""
		if r.paused {
			paused = "⏸"
		}
		fmt.Fprintf(&s, "| %s | %s | %s | %s | %s | %s |\n", code(n), latest, strings.Join(r.drafts, " "), strings.Join(r.proposals, " "), strings.Join(r.updates, " "), paused)
	}
	pkgs := make([]string, 0, len(rc.fanOut))
	for p := range rc.fanOut {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		s.WriteString(rc.fanOut[p])
	}
	var errs []string
	for _, p := range rc.out.Problems {
		if p.Severity == SeverityError {
			errs = append(errs, fmt.Sprintf("- %s %s: %s", code(p.Package), userText(p.File), userText(truncate(p.Message, 300))))
		}
	}
	if len(errs) > 0 {
		s.WriteString(errorsHeading + "\n\n" + strings.Join(errs, "\n") + "\n")
	}
	return s.String(), len(rows), nil
}
