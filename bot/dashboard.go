package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/dashboard"
	"github.com/kptbot/kptbot/forge"
)

// DashboardLabel marks the dashboard issue the bot keeps per repository.
const DashboardLabel = dashboard.Label

const dashboardTitle = dashboard.Title

// FanOutHeading starts each fan-out section of a dashboard (package
// fanout renders them): the bot finds them by it to keep them.
const FanOutHeading = dashboard.FanOutHeading

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
		if kept := dashboard.KeptFanOut(issues[0].Body); kept != "" {
			rc.fanOut = map[string]string{"": kept}
		}
	}
	var errs []dashboard.Error
	for _, p := range rc.out.Problems {
		if p.Severity == SeverityError {
			errs = append(errs, dashboard.Error{Package: p.Package, File: p.File, Message: p.Message})
		}
	}
	body, shown, err := dashboard.Body(ctx, dashboard.Input{F: rc.f, Repo: rc.repo, Directory: rc.spec.Directory, Login: b.login(rc.repo.Forge), Variants: rc.cfg.Variants, FanOut: rc.fanOut, Errors: errs})
	if err != nil {
		return err
	}
	if b.opts.DryRun {
		return nil
	}
	if len(issues) == 0 {
		if shown == 0 {
			// Nothing the pull request list does not show already (or
			// nothing of kptbot's at all): the issue is opened the first
			// time there is, not on every follower's first resync.
			return nil
		}
		_, err := rc.f.OpenIssue(ctx, rc.repo, dashboardTitle, body, []string{DashboardLabel})
		return err
	}
	if issues[0].Body == body {
		return nil
	}
	return rc.f.EditIssue(ctx, rc.repo, issues[0].Number, dashboardTitle, body)
}
