package review

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       []Command
	}{
		{"plain", "/kptbot propose", []Command{{Verb: VerbPropose, Line: 1}}},
		{"mention", "@kptbot approve", []Command{{Verb: VerbApprove, Line: 1}}},
		{"app mention", "@kptbot[bot] render", []Command{{Verb: VerbRender, Line: 1}}},
		{"case", "/KPTBOT Reject", []Command{{Verb: VerbReject, Line: 1}}},
		{"args", "/kptbot update v3", []Command{{Verb: VerbUpdate, Args: []string{"v3"}, Line: 1}}},
		{"bare is help", "/kptbot", []Command{{Verb: VerbHelp, Line: 1}}},
		{"in a note", "LGTM.\n\n/kptbot approve\nthanks", []Command{{Verb: VerbApprove, Line: 3}}},
		{"two", "/kptbot render\r\n/kptbot propose", []Command{{Verb: VerbRender, Line: 1}, {Verb: VerbPropose, Line: 2}}},
		{"unknown", "/kptbot aprove", []Command{{Unknown: "aprove", Suggest: VerbApprove, Line: 1}}},
		{"unknown far", "/kptbot frobnicate", []Command{{Unknown: "frobnicate", Line: 1}}},
		{"other bot", "/atlantis plan", nil},
		{"mid-line", "please run /kptbot approve", nil},
		{"prefix word", "/kptbotx approve", nil},
		{"quoted", "> /kptbot approve", nil},
		{"fenced", "```\n/kptbot approve\n```\n/kptbot render", []Command{{Verb: VerbRender, Line: 4}}},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ParseCommands("kptbot", tc.body)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseCommands(%q) (-want +got):\n%s", tc.body, diff)
			}
		})
	}
}

func TestHelpTextListsEveryVerb(t *testing.T) {
	t.Parallel()
	h := HelpText("kptbot")
	for _, v := range verbHelp {
		if !strings.Contains(h, "`/kptbot "+string(v.Verb)) {
			t.Errorf("help does not list %s", v.Verb)
		}
	}
}

func FuzzParseCommands(f *testing.F) {
	for _, s := range []string{"/kptbot approve", "@kptbot x y z", "```\n/kptbot\n", "/kptbot " + strings.Repeat("a", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, c := range ParseCommands("kptbot", body) {
			if c.Verb == "" && c.Unknown == "" {
				t.Fatalf("command with neither verb nor unknown: %+v", c)
			}
			if c.Verb != "" && !knownVerb(string(c.Verb)) {
				t.Fatalf("unknown verb returned as known: %+v", c)
			}
			if c.Line < 1 || c.Line > strings.Count(body, "\n")+1 {
				t.Fatalf("line %d out of range", c.Line)
			}
		}
	})
}
