package fanout

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/engine/pkgmerge"
)

func TestClassifyFanOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		state string
		want  fanOutClass
	}{
		{"up to date", stateUpToDate},
		{"change #12 (update)", stateChangeOpen},
		{"change #3 (clone)", stateChangeOpen},
		{"change #12 (update, 2 conflicts)", stateConflicted},
		{"held: someone else pushed to drafts/ns/kptbot-update", stateChangeOpen},
		{"skip: paused", statePaused},
		{"skip: #7 is paused", statePaused},
		{"skip: maxOpenUpdates reached", stateSkipped},
		{"dispatched", stateDispatched},
		{"failed: forbidden", stateFailed},
		{"", stateSkipped},
	} {
		if got := classifyFanOut(tc.state); got != tc.want {
			t.Errorf("classifyFanOut(%q) = %v, want %v", tc.state, fanOutClasses[got].label, fanOutClasses[tc.want].label)
		}
	}
	for i, s := range fanOutClasses {
		if int(s.state) != i {
			t.Errorf("fanOutClasses[%d] is %s: the table must follow the constants' order", i, s.label)
		}
	}
}

func TestFanOutMermaid(t *testing.T) {
	t.Parallel()
	small := map[string]string{
		"acme/edge-2": "change #5 (update, 1 conflicts)",
		"acme/edge-1": "up to date",
		"acme/edge-3": `failed: "quoted" <b>bold</b>`,
		"acme/edge-4": "skip: paused",
	}
	large := map[string]string{}
	for i := 0; i < 1000; i++ {
		state := "up to date"
		switch {
		case i%100 == 0:
			state = "failed: 502"
		case i%10 == 0:
			state = fmt.Sprintf("change #%d (update)", i)
		}
		large[fmt.Sprintf("acme/site-%04d", i)] = state
	}
	for _, tc := range []struct {
		name     string
		progress map[string]string
		max      int
		want     []string // lines the picture must hold, in order
		not      []string
		maxLines int
	}{
		{name: "empty", progress: nil, max: 20},
		{
			name: "one node per repository", progress: small, max: 20,
			want: []string{
				"```mermaid", "flowchart LR", `  up["acme/blueprints basens/v2"]`,
				`  up --> d0["acme/edge-1<br/>up to date"]:::uptodate`,
				`  up --> d1["acme/edge-2<br/>change #5 (update, 1 conflicts)"]:::conflicted`,
				`  up --> d2["acme/edge-3<br/>failed: #quot;quoted#quot; #lt;b#gt;bold#lt;/b#gt;"]:::failed`,
				`  up --> d3["acme/edge-4<br/>skip: paused"]:::paused`,
				"  classDef uptodate ", "  classDef conflicted ", "  classDef paused ", "  classDef failed ", "```",
			},
			not: []string{"classDef open", "classDef dispatched", "<b>"},
		},
		{
			name: "grouped by state beyond the limit", progress: large, max: 20,
			want: []string{
				`  up --> uptodate["up to date: 900<br/>acme/site-0001, acme/site-0002, acme/site-0003, …"]:::uptodate`,
				`  up --> open["change open: 90<br/>acme/site-0010, acme/site-0020, acme/site-0030, …"]:::open`,
				`  up --> failed["failed: 10<br/>acme/site-0000, acme/site-0100, acme/site-0200, …"]:::failed`,
			},
			not:      []string{"d0[", "site-0999"},
			maxLines: 12,
		},
		{
			name: "exactly at the limit stays one node each", progress: map[string]string{"a/x": "up to date", "a/y": "dispatched"}, max: 2,
			want: []string{`  up --> d0["a/x<br/>up to date"]:::uptodate`, `  up --> d1["a/y<br/>dispatched"]:::dispatched`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fanOutMermaid("acme/blueprints basens/v2", tc.progress, tc.max)
			if len(tc.progress) == 0 {
				if got != "" {
					t.Fatalf("no repositories: got %q, want nothing", got)
				}
				return
			}
			rest := got
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("missing (or out of order) %q in:\n%s", w, got)
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("holds %q:\n%s", n, got)
				}
			}
			if lines := strings.Count(got, "\n"); tc.maxLines > 0 && lines > tc.maxLines {
				t.Errorf("%d lines for %d repositories: want at most %d\n%s", lines, len(tc.progress), tc.maxLines, got)
			}
		})
	}
}

// TestFanOutDashboardPicture publishes an upstream revision to a fleet on
// the fake forge and reads the upstream's dashboard issue: the fan-out
// section starts with the picture, one node per downstream repository.
func TestFanOutDashboardPicture(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, 3)
	fl.tagEvent(1)
	issues, _ := fl.fake.ListIssues(fl.ctx, blueprints, bot.DashboardLabel)
	if len(issues) != 1 {
		t.Fatalf("upstream dashboards: %+v", issues)
	}
	body := issues[0].Body
	for _, want := range []string{"```mermaid\nflowchart LR\n", `up["acme/blueprints basens"]`, `["acme/site-1<br/>change #`, ":::open", "classDef open "} {
		if !strings.Contains(body, want) {
			t.Errorf("the dashboard lacks %q:\n%s", want, body)
		}
	}
	if strings.Index(body, "```mermaid") > strings.Index(body, "| repository | state |") {
		t.Errorf("the picture comes after the table:\n%s", body)
	}
}

// TestFanOutStateConflicts: an update change with conflicts reads as
// conflicted in the picture, one without as a change open.
func TestFanOutStateConflicts(t *testing.T) {
	t.Parallel()
	withConflicts, _ := followerState([]bot.VariantAction{{Kind: "update", Change: 5, Conflicts: []pkgmerge.Conflict{{Field: "spec.x"}, {Field: "spec.y"}}}}, nil)
	plain, _ := followerState([]bot.VariantAction{{Kind: "update", Change: 6}}, nil)
	if withConflicts != "change #5 (update, 2 conflicts)" || classifyFanOut(withConflicts) != stateConflicted {
		t.Errorf("with conflicts: %q (%v)", withConflicts, classifyFanOut(withConflicts))
	}
	if plain != "change #6 (update)" || classifyFanOut(plain) != stateChangeOpen {
		t.Errorf("without conflicts: %q (%v)", plain, classifyFanOut(plain))
	}
}
