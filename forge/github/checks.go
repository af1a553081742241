package github

import (
	"context"
	"fmt"
	"net/http"

	gh "github.com/google/go-github/v60/github"

	"github.com/kptbot/kptbot/forge"
)

// ReportCheck implements forge.Checks with a check run; GitHub shows the
// newest run of a name, so each report is a new run.
func (c *Client) ReportCheck(ctx context.Context, r forge.Repo, rep forge.CheckReport) error {
	if err := rep.Validate(); err != nil {
		return err
	}
	owner, name, err := split(r)
	if err != nil {
		return err
	}
	opts := gh.CreateCheckRunOptions{Name: rep.Name, HeadSHA: rep.HeadSHA, Status: gh.String(string(rep.Status))}
	if rep.Conclusion != "" {
		opts.Conclusion = gh.String(string(rep.Conclusion))
	}
	if rep.DetailsURL != "" {
		opts.DetailsURL = gh.String(rep.DetailsURL)
	}
	if rep.Title != "" || rep.Summary != "" || len(rep.Annotations) > 0 {
		opts.Output = &gh.CheckRunOutput{Title: gh.String(rep.Title), Summary: gh.String(rep.Summary)}
		// GitHub takes at most 50 annotations per request.
		for i, a := range rep.Annotations {
			if i == maxAnnotations {
				break
			}
			line := max(a.Line, 1)
			opts.Output.Annotations = append(opts.Output.Annotations, &gh.CheckRunAnnotation{
				Path: gh.String(a.Path), StartLine: gh.Int(line), EndLine: gh.Int(line),
				AnnotationLevel: gh.String(a.Level), Message: gh.String(a.Message)})
		}
		if opts.Output.Title == nil || *opts.Output.Title == "" {
			opts.Output.Title = gh.String(rep.Name) // GitHub requires a title with an output
		}
	}
	if c.checkThere(ctx, owner, name, rep) {
		return nil
	}
	if _, _, err := c.gh.Checks.CreateCheckRun(ctx, owner, name, opts); err != nil {
		return apiError(fmt.Sprintf("reporting check %s on %s in %s", rep.Name, rep.HeadSHA, r.FullName), unprocessable(err, "No commit found", forge.ErrNotFound))
	}
	return nil
}

// checkThere reports whether the commit's latest run of rep's check
// already says what rep says (status, conclusion, title, summary, number
// of annotations): every resync renders each open change again, and a
// write is what GitHub's secondary limits count, a read is not. Any doubt
// (a failed read) writes.
func (c *Client) checkThere(ctx context.Context, owner, name string, rep forge.CheckReport) bool {
	runs, _, err := c.gh.Checks.ListCheckRunsForRef(ctx, owner, name, rep.HeadSHA, &gh.ListCheckRunsOptions{CheckName: gh.String(rep.Name), Filter: gh.String("latest")})
	if err != nil || runs == nil || len(runs.CheckRuns) == 0 {
		return false
	}
	run := runs.CheckRuns[0]
	title := rep.Title
	if title == "" && (rep.Summary != "" || len(rep.Annotations) > 0) {
		title = rep.Name
	}
	out := run.GetOutput()
	return run.GetName() == rep.Name && run.GetStatus() == string(rep.Status) && run.GetConclusion() == string(rep.Conclusion) &&
		out.GetTitle() == title && out.GetSummary() == rep.Summary && out.GetAnnotationsCount() == min(len(rep.Annotations), maxAnnotations)
}

// RequiredChecks implements forge.Checks from the repository's protected
// branches as listed (GET /branches?protected=true shows each one's
// required status checks): one read, no administration permission needed.
// Rulesets are not read, so a check a ruleset requires is not seen here.
func (c *Client) RequiredChecks(ctx context.Context, r forge.Repo, branch string) ([]string, error) {
	owner, name, err := split(r)
	if err != nil {
		return nil, err
	}
	req, err := c.gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/branches?protected=true&per_page=100", owner, name), nil)
	if err != nil {
		return nil, err
	}
	var bs []struct {
		Name       string `json:"name"`
		Protection struct {
			RequiredStatusChecks struct {
				Contexts []string `json:"contexts"`
				Checks   []struct {
					Context string `json:"context"`
				} `json:"checks"`
			} `json:"required_status_checks"`
		} `json:"protection"`
	}
	if _, err := c.gh.Do(ctx, req, &bs); err != nil {
		return nil, apiError("listing the protected branches of "+r.FullName, err)
	}
	var out []string
	seen := map[string]bool{}
	for _, b := range bs {
		if b.Name != branch {
			continue
		}
		names := b.Protection.RequiredStatusChecks.Contexts // GitHub lists each name in both
		for _, ch := range b.Protection.RequiredStatusChecks.Checks {
			names = append(names, ch.Context)
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}
