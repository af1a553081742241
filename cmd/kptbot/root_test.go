package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestTopCommandNames: a top-level command is built alone when the command
// line names it, so its name in topCommands must be the one cobra matches.
func TestTopCommandNames(t *testing.T) {
	t.Parallel()
	for name, build := range topCommands() {
		cmd := build()
		if cmd.Name() != name || len(cmd.Aliases) > 0 {
			t.Errorf("topCommands lists %q, but the command is named %q (aliases %q)", name, cmd.Name(), cmd.Aliases)
		}
	}
}

// TestOnlyTheNamedCommandIsBuilt: every command's help, and a command line
// cobra rejects, read the same whether the root was built with the named
// top-level command only or whole.
func TestOnlyTheNamedCommandIsBuilt(t *testing.T) {
	t.Parallel()
	if got := newRootCmd(&bytes.Buffer{}, &bytes.Buffer{}, "version").Commands(); len(got) != 1 || got[0].Name() != "version" {
		t.Fatalf("kptbot version built %d top-level commands, want version alone", len(got))
	}
	var lines [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		lines = append(lines, append(append([]string{}, path...), "--help"))
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string{}, path...), sub.Name()))
		}
	}
	walk(newRootCmd(&bytes.Buffer{}, &bytes.Buffer{}), nil)
	lines = append(lines, []string{"version", "extra"}, []string{"pkg", "nosuch"}, []string{"version", "--nosuch"}, []string{"nosuch"}, []string{"--help"}, []string{"help", "fn"})
	if len(lines) < 30 {
		t.Fatalf("walked only %d command lines", len(lines))
	}
	for _, args := range lines {
		lazyOut, lazyErr, lazyCode := execRoot(newRootCmd, args, args...)
		fullOut, fullErr, fullCode := execRoot(newRootCmd, args)
		if lazyOut != fullOut || lazyErr != fullErr || lazyCode != fullCode {
			t.Errorf("kptbot %s: built for the command line: exit %d\n%s%s\nbuilt whole: exit %d\n%s%s", strings.Join(args, " "), lazyCode, lazyOut, lazyErr, fullCode, fullOut, fullErr)
		}
	}
}

func execRoot(build func(stdout, stderr io.Writer, args ...string) *cobra.Command, args []string, buildArgs ...string) (string, string, int) {
	var out, errb bytes.Buffer
	root := build(&out, &errb, buildArgs...)
	root.SetArgs(args)
	code := 0
	if err := root.ExecuteContext(context.Background()); err != nil {
		errb.WriteString("Error: " + err.Error() + "\n")
		code = 1
	}
	return out.String(), errb.String(), code
}
