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
	"sort"
	"strconv"
	"strings"

	"github.com/kptbot/kptbot/bot"
)

// reportGitHub writes the step's outputs and summary and prints an
// annotation per problem and per failure.
func reportGitHub(stdout io.Writer, env Env, out bot.Outcome, runErrs []error) error {
	for _, p := range out.Problems {
		fmt.Fprintln(stdout, problemCommand(p))
	}
	for _, err := range runErrs {
		fmt.Fprintln(stdout, command("error", [][2]string{{"title", "kptbot"}}, err.Error()))
	}
	var errs []error
	if env.OutputFile != "" {
		outputs, err := Outputs(out)
		if err == nil {
			err = appendFile(env.OutputFile, outputs)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("writing the step outputs (GITHUB_OUTPUT): %w", err))
		}
	}
	if env.SummaryFile != "" {
		if err := appendFile(env.SummaryFile, []byte(Summary(env, out, runErrs))); err != nil {
			errs = append(errs, fmt.Errorf("writing the step summary (GITHUB_STEP_SUMMARY): %w", err))
		}
	}
	return errors.Join(errs...)
}

// appendFile appends to a file the runner created: GITHUB_OUTPUT and
// GITHUB_STEP_SUMMARY collect every step's writes.
func appendFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Outputs renders the step outputs in GITHUB_OUTPUT's format: changes, the
// outcome as one line of JSON; published, the tags created, one per line
// (empty when none, so `if: steps.kptbot.outputs.published != ”` works).
func Outputs(out bot.Outcome) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the value is read by workflows, not browsers
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("encoding the outcome: %w", err)
	}
	changes := strings.TrimSuffix(buf.String(), "\n")
	var b strings.Builder
	for _, kv := range [][2]string{{OutputChanges, changes}, {OutputPublished, strings.Join(Published(out), "\n")}} {
		if err := writeOutput(&b, kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	return []byte(b.String()), nil
}

// Published lists the tag names the outcome created, in order.
func Published(out bot.Outcome) []string {
	tags := make([]string, 0, len(out.Tags))
	for _, t := range out.Tags {
		tags = append(tags, t.Name)
	}
	return tags
}

// writeOutput writes one output in the multi-line form
//
//	name<<DELIMITER
//	value
//	DELIMITER
//
// The delimiter is derived from the value's hash, so output is
// reproducible and no value can end the block early: a value containing
// its own hash cannot be constructed. The check is kept as GitHub's
// toolkit keeps it.
func writeOutput(b *strings.Builder, name, value string) error {
	sum := sha256.Sum256([]byte(name + "\x00" + value))
	delim := "ghadelimiter_" + hex.EncodeToString(sum[:16])
	if strings.Contains(name, delim) || strings.Contains(value, delim) {
		return fmt.Errorf("output %s: the value contains its delimiter", name)
	}
	if strings.ContainsAny(name, "\r\n") {
		return fmt.Errorf("output %q: a name cannot hold a line break", name)
	}
	fmt.Fprintf(b, "%s<<%s\n%s\n%s\n", name, delim, value, delim)
	return nil
}

// problemCommand is the workflow command that annotates a problem at its
// file and line.
func problemCommand(p bot.Problem) string {
	level := "error"
	if p.Severity == bot.SeverityWarning {
		level = "warning"
	}
	title := "kptbot"
	if p.Package != "" {
		title += ": " + p.Package
	}
	props := [][2]string{{"title", title}}
	if p.File != "" {
		props = append(props, [2]string{"file", p.File})
		if p.Line > 0 {
			props = append(props, [2]string{"line", strconv.Itoa(p.Line)})
		}
	}
	return command(level, props, p.Message)
}

// command formats a workflow command, `::name k=v,k=v::message`, escaping
// as GitHub's toolkit does: %, CR and LF in the message; those and : and ,
// in property values.
func command(name string, props [][2]string, message string) string {
	var b strings.Builder
	b.WriteString("::" + name)
	for i, kv := range props {
		if i == 0 {
			b.WriteString(" ")
		} else {
			b.WriteString(",")
		}
		b.WriteString(kv[0] + "=" + escapeProperty(kv[1]))
	}
	b.WriteString("::" + escapeData(message))
	return b.String()
}

func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// sortedPackages lists the packages an outcome mentions, the repository
// itself ("") last.
func sortedPackages(out bot.Outcome) []string {
	seen := map[string]bool{}
	add := func(p string) { seen[p] = true }
	for _, cs := range [][]bot.ChangeRef{out.Opened, out.Updated, out.Merged, out.Closed} {
		for _, c := range cs {
			add(c.Package)
		}
	}
	for _, t := range out.Tags {
		add(t.Package)
	}
	for _, c := range out.Checks {
		add(c.Package)
	}
	for _, p := range out.Problems {
		add(p.Package)
	}
	pkgs := make([]string, 0, len(seen))
	for p := range seen {
		pkgs = append(pkgs, p)
	}
	sort.Slice(pkgs, func(i, j int) bool {
		if (pkgs[i] == "") != (pkgs[j] == "") {
			return pkgs[j] == ""
		}
		return pkgs[i] < pkgs[j]
	})
	return pkgs
}
