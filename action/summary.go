package action

import (
	"fmt"
	"html"
	"strings"

	"github.com/kptbot/kptbot/bot"
)

// Summary renders the Markdown step summary: what started the run, then a
// table per package of what the bot did (changes opened, updated, merged
// and closed, revisions published, checks reported, problems found).
func Summary(env Env, out bot.Outcome, runErrs []error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## kptbot: %s\n\n", inline(env.Repo.FullName))
	trigger := env.Trigger.Reason
	if trigger == "" {
		trigger = "reconcile of " + env.Repo.FullName
	}
	fmt.Fprintf(&b, "Triggered by %s; mode: %s.", inline(trigger), modeName(env.Inputs.Mode))
	if env.RunURL != "" {
		fmt.Fprintf(&b, " [Run](%s).", env.RunURL)
	}
	b.WriteString("\n\n")
	if env.Inputs.DryRun {
		b.WriteString("> **Dry run:** nothing was written to the forge; the tables say what would have been done.\n\n")
	}
	for _, err := range runErrs {
		fmt.Fprintf(&b, "> **Failed:** %s\n\n", cell(err.Error()))
	}
	if out.Empty() {
		if out.Skipped != "" {
			fmt.Fprintf(&b, "Nothing to do: %s.\n", cell(out.Skipped))
		} else {
			b.WriteString("Nothing to do.\n")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%d opened, %d updated, %d merged, %d closed, %d published, %d check(s), %d comment(s), %d problem(s).\n\n",
		len(out.Opened), len(out.Updated), len(out.Merged), len(out.Closed), len(out.Tags), len(out.Checks), out.Comments, len(out.Problems))
	for _, pkg := range sortedPackages(out) {
		rows := packageRows(out, pkg)
		if pkg == "" {
			b.WriteString("### Repository\n\n")
		} else {
			fmt.Fprintf(&b, "### %s\n\n", inline(pkg))
		}
		b.WriteString("| What | Item | Details |\n| --- | --- | --- |\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", r[0], r[1], r[2])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// packageRows are the summary rows of one package, in lifecycle order.
func packageRows(out bot.Outcome, pkg string) [][3]string {
	var rows [][3]string
	changes := func(what string, cs []bot.ChangeRef) {
		for _, c := range cs {
			if c.Package == pkg {
				rows = append(rows, [3]string{what, link(fmt.Sprintf("#%d", c.Number), c.URL), cell(c.Title)})
			}
		}
	}
	changes("Opened", out.Opened)
	changes("Updated", out.Updated)
	changes("Merged", out.Merged)
	changes("Closed", out.Closed)
	for _, t := range out.Tags {
		if t.Package == pkg {
			rows = append(rows, [3]string{"Published", inline(t.Name), "at " + inline(short(t.SHA))})
		}
	}
	for _, c := range out.Checks {
		if c.Package == pkg {
			details := conclusion(c.Conclusion)
			if c.Summary != "" {
				details += ": " + cell(c.Summary)
			}
			rows = append(rows, [3]string{"Check", cell(c.Name) + " at " + inline(short(c.SHA)), details})
		}
	}
	for _, p := range out.Problems {
		if p.Package != pkg {
			continue
		}
		what := "Error"
		if p.Severity == bot.SeverityWarning {
			what = "Warning"
		}
		where := ""
		if p.File != "" {
			where = p.File
			if p.Line > 0 {
				where += fmt.Sprintf(":%d", p.Line)
			}
			where = inline(where)
		}
		rows = append(rows, [3]string{what, where, cell(p.Message)})
	}
	return rows
}

func conclusion(c string) string {
	switch c {
	case "success":
		return "✅ success"
	case "failure":
		return "❌ failure"
	case "neutral", "skipped":
		return "➖ " + c
	}
	return cell(c)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// cell makes text safe inside a Markdown table cell: HTML escaped (the
// summary renders HTML), pipes escaped, line breaks as <br>.
func cell(s string) string {
	s = html.EscapeString(strings.TrimSpace(s))
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\n", "<br>")
}

// inline renders text as inline code, which Markdown does not interpret;
// backticks inside become a longer fence.
func inline(s string) string {
	s = strings.NewReplacer("\r", " ", "\n", " ", "|", `\|`).Replace(s)
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// link is a Markdown link when url is http(s), plain text otherwise.
func link(text, url string) string {
	if strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://") {
		return fmt.Sprintf("[%s](%s)", cell(text), strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "|", "%7C").Replace(url))
	}
	return cell(text)
}
