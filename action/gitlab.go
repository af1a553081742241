package action

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kptbot/kptbot/bot"
)

// EnvCodeQuality names the job's Code Quality report (default
// gl-code-quality-report.json): GitLab shows its entries on the merge
// request's diff, at the file and line, the counterpart of GitHub's
// annotations.
const EnvCodeQuality = "KPTBOT_CODEQUALITY"

// dotenvLimit is GitLab's size limit for a dotenv report (5 KiB).
const dotenvLimit = 5 << 10

// Report is the JSON report a GitLab job leaves as an artifact.
type Report struct {
	Repo      string      `json:"repo"`
	Trigger   string      `json:"trigger"`
	Mode      string      `json:"mode"`
	DryRun    bool        `json:"dryRun,omitempty"`
	Outcome   bot.Outcome `json:"outcome"`
	Published []string    `json:"published"`
	Errors    []string    `json:"errors,omitempty"`
}

// reportGitLab prints a log line per thing done and per problem, and
// writes the dotenv, JSON and Code Quality reports.
func reportGitLab(stdout io.Writer, env Env, out bot.Outcome, runErrs []error) error {
	fmt.Fprintf(stdout, "kptbot: %s: %s; mode: %s\n", env.Repo.FullName, oneLine(env.Trigger.Reason), modeName(env.Inputs.Mode))
	if env.Inputs.DryRun {
		fmt.Fprintln(stdout, "kptbot: dry run: nothing was written to the forge; the lines below say what would have been done")
	}
	writeLogLines(stdout, out, runErrs)
	rep := Report{Repo: env.Repo.FullName, Trigger: env.Trigger.Reason, Mode: modeName(env.Inputs.Mode),
		DryRun: env.Inputs.DryRun, Outcome: out, Published: Published(out)}
	for _, err := range runErrs {
		rep.Errors = append(rep.Errors, err.Error())
	}
	var errs []error
	if env.ReportFile != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(env.ReportFile, append(b, '\n'), 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("writing the JSON report %s: %w", env.ReportFile, err))
		}
	}
	if env.DotenvFile != "" {
		b, dropped := Dotenv(out, len(runErrs))
		if dropped {
			fmt.Fprintf(stdout, "WARNING kptbot: KPTBOT_PUBLISHED left out of %s: over GitLab's %d-byte dotenv limit; the JSON report lists every tag\n", env.DotenvFile, dotenvLimit)
		}
		if err := os.WriteFile(env.DotenvFile, b, 0o644); err != nil {
			errs = append(errs, fmt.Errorf("writing the dotenv report %s: %w", env.DotenvFile, err))
		}
	}
	if env.CodeQualityFile != "" {
		b, err := CodeQuality(out)
		if err == nil {
			err = os.WriteFile(env.CodeQualityFile, b, 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("writing the Code Quality report %s: %w", env.CodeQualityFile, err))
		}
	}
	return errors.Join(errs...)
}

// writeLogLines prints the outcome as plain lines, one per thing done.
func writeLogLines(w io.Writer, out bot.Outcome, runErrs []error) {
	pkg := func(p string) string {
		if p == "" {
			return ""
		}
		return " [" + p + "]"
	}
	for _, g := range []struct {
		verb string
		cs   []bot.ChangeRef
	}{{"opened", out.Opened}, {"updated", out.Updated}, {"merged", out.Merged}, {"closed", out.Closed}} {
		for _, c := range g.cs {
			fmt.Fprintf(w, "kptbot: %s !%d%s %s %s\n", g.verb, c.Number, pkg(c.Package), oneLine(c.Title), c.URL)
		}
	}
	for _, t := range out.Tags {
		fmt.Fprintf(w, "kptbot: published %s at %s%s\n", t.Name, short(t.SHA), pkg(t.Package))
	}
	for _, c := range out.Checks {
		fmt.Fprintf(w, "kptbot: check %s at %s: %s%s\n", c.Name, short(c.SHA), c.Conclusion, pkg(c.Package))
	}
	if out.Comments > 0 {
		fmt.Fprintf(w, "kptbot: %d comment(s) posted\n", out.Comments)
	}
	for _, p := range out.Problems {
		level := "ERROR"
		if p.Severity == bot.SeverityWarning {
			level = "WARNING"
		}
		where := "kptbot"
		if p.File != "" {
			where = p.File
			if p.Line > 0 {
				where += ":" + strconv.Itoa(p.Line)
			}
		}
		fmt.Fprintf(w, "%s %s: %s%s\n", level, where, oneLine(p.Message), pkg(p.Package))
	}
	for _, err := range runErrs {
		fmt.Fprintf(w, "ERROR kptbot: %s\n", oneLine(err.Error()))
	}
	if out.Empty() {
		reason := out.Skipped
		if reason == "" {
			reason = "nothing to do"
		}
		fmt.Fprintf(w, "kptbot: %s\n", oneLine(reason))
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Dotenv renders the job's dotenv report, which GitLab turns into variables
// of later jobs and downstream pipelines. GitLab's dotenv takes single-line
// unquoted values only and at most 5 KiB, so it holds counts and the
// published tags (comma-separated); dropped says the tag list was left out
// to stay under the limit.
func Dotenv(out bot.Outcome, runErrors int) (b []byte, dropped bool) {
	var buf bytes.Buffer
	for _, kv := range [][2]string{
		{"KPTBOT_OPENED", strconv.Itoa(len(out.Opened))},
		{"KPTBOT_UPDATED", strconv.Itoa(len(out.Updated))},
		{"KPTBOT_MERGED", strconv.Itoa(len(out.Merged))},
		{"KPTBOT_CLOSED", strconv.Itoa(len(out.Closed))},
		{"KPTBOT_ERRORS", strconv.Itoa(countErrors(out) + runErrors)},
	} {
		fmt.Fprintf(&buf, "%s=%s\n", kv[0], kv[1])
	}
	line := "KPTBOT_PUBLISHED=" + strings.Join(Published(out), ",") + "\n"
	if buf.Len()+len(line) > dotenvLimit {
		return buf.Bytes(), true
	}
	buf.WriteString(line)
	return buf.Bytes(), false
}

// codeQualityIssue is one entry of GitLab's Code Quality report (a subset
// of the Code Climate format).
type codeQualityIssue struct {
	Description string `json:"description"`
	CheckName   string `json:"check_name"`
	Fingerprint string `json:"fingerprint"`
	Severity    string `json:"severity"`
	Location    struct {
		Path  string `json:"path"`
		Lines struct {
			Begin int `json:"begin"`
		} `json:"lines"`
	} `json:"location"`
}

// CodeQuality renders the problems that have a file as a Code Quality
// report; the fingerprint is stable across runs so GitLab can tell new
// problems from old.
func CodeQuality(out bot.Outcome) ([]byte, error) {
	issues := []codeQualityIssue{}
	for _, p := range out.Problems {
		if p.File == "" {
			continue
		}
		var is codeQualityIssue
		is.Description = oneLine(p.Message)
		is.CheckName = "kptbot"
		if p.Package != "" {
			is.CheckName += "/" + p.Package
		}
		is.Severity = "major"
		if p.Severity == bot.SeverityWarning {
			is.Severity = "minor"
		}
		is.Location.Path = p.File
		is.Location.Lines.Begin = max(p.Line, 1)
		sum := sha256.Sum256([]byte(strings.Join([]string{is.CheckName, p.File, strconv.Itoa(p.Line), p.Message}, "\x00")))
		is.Fingerprint = hex.EncodeToString(sum[:16])
		issues = append(issues, is)
	}
	b, err := json.MarshalIndent(issues, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the Code Quality report: %w", err)
	}
	return append(b, '\n'), nil
}
