package fanout

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/bot"
)

// fanOutClass is what a downstream repository's state in a fan-out means,
// for the picture: the fan-out report's state strings are for people.
type fanOutClass int

const (
	stateUpToDate fanOutClass = iota
	stateChangeOpen
	stateConflicted
	statePaused
	stateDispatched
	stateSkipped
	stateFailed
)

// fanOutClasses are the states in the order the picture lists them, with
// their label and Mermaid class (fill and stroke GitHub and GitLab render
// in light and dark themes alike).
var fanOutClasses = []struct {
	state        fanOutClass
	label, class string
	style        string
}{
	{stateUpToDate, "up to date", "uptodate", "fill:#d1f0d8,stroke:#1a7f37,color:#000"},
	{stateChangeOpen, "change open", "open", "fill:#dbeafe,stroke:#0969da,color:#000"},
	{stateConflicted, "conflicted", "conflicted", "fill:#fff1c2,stroke:#9a6700,color:#000"},
	{statePaused, "paused", "paused", "fill:#eaeef2,stroke:#57606a,color:#000"},
	{stateDispatched, "dispatched", "dispatched", "fill:#ede9fe,stroke:#8250df,color:#000"},
	{stateSkipped, "skipped", "skipped", "fill:#f6f8fa,stroke:#8c959f,color:#000"},
	{stateFailed, "failed", "failed", "fill:#ffd8d3,stroke:#cf222e,color:#000"},
}

// classifyFanOut reads a fan-out report state ("up to date", "change #12
// (update)", "change #12 (update, 2 conflicts)", "skip: paused", "held:
// …", "dispatched", "failed: …").
func classifyFanOut(state string) fanOutClass {
	switch {
	case strings.HasPrefix(state, "up to date"):
		return stateUpToDate
	case strings.HasPrefix(state, "change #"):
		if strings.Contains(state, "conflict") {
			return stateConflicted
		}
		return stateChangeOpen
	case strings.HasPrefix(state, "held"):
		// A change exists; a person's commits hold the bot off it.
		return stateChangeOpen
	case strings.HasPrefix(state, "skip") && strings.Contains(state, "paused"):
		return statePaused
	case strings.HasPrefix(state, "dispatched"):
		return stateDispatched
	case strings.HasPrefix(state, "failed"):
		return stateFailed
	}
	return stateSkipped
}

// fanOutMaxNodes is how many downstream repositories the picture draws one
// by one; a larger fleet is drawn as one node per state with its count, so
// a 1,000-repository fan-out stays readable and small.
const fanOutMaxNodes = 20

// fanOutMermaid draws an upstream revision and the downstream repositories
// it fans out to, each with its state, as a Mermaid flowchart in a fenced
// block (GitHub and GitLab render it in issues). Beyond maxNodes
// repositories it draws one node per state with the count and a few names.
func fanOutMermaid(upstream string, progress map[string]string, maxNodes int) string {
	if len(progress) == 0 {
		return ""
	}
	repos := make([]string, 0, len(progress))
	for r := range progress {
		repos = append(repos, r)
	}
	sort.Strings(repos)
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart LR\n")
	fmt.Fprintf(&b, "  up[\"%s\"]\n", mermaidLabel(upstream))
	used := map[fanOutClass]bool{}
	if len(repos) <= maxNodes {
		for i, r := range repos {
			st := classifyFanOut(progress[r])
			used[st] = true
			fmt.Fprintf(&b, "  up --> d%d[\"%s<br/>%s\"]:::%s\n", i, mermaidLabel(r), mermaidLabel(clip(progress[r], 60)), fanOutClasses[st].class)
		}
	} else {
		groups := map[fanOutClass][]string{}
		for _, r := range repos {
			st := classifyFanOut(progress[r])
			groups[st] = append(groups[st], r)
		}
		for _, s := range fanOutClasses {
			members := groups[s.state]
			if len(members) == 0 {
				continue
			}
			used[s.state] = true
			sample := members
			if len(sample) > 3 {
				sample = sample[:3]
			}
			names := make([]string, len(sample))
			for i, r := range sample {
				names[i] = mermaidLabel(r)
			}
			more := ""
			if len(members) > len(sample) {
				more = ", …"
			}
			fmt.Fprintf(&b, "  up --> %s[\"%s: %d<br/>%s%s\"]:::%s\n", s.class, s.label, len(members), strings.Join(names, ", "), more, s.class)
		}
	}
	for _, s := range fanOutClasses {
		if used[s.state] {
			fmt.Fprintf(&b, "  classDef %s %s\n", s.class, s.style)
		}
	}
	b.WriteString("```\n")
	return b.String()
}

// mermaidLabel makes text safe inside a quoted Mermaid label: quotes and
// angle brackets become entity codes (no markup from a repository name or
// an error message reaches the renderer), line breaks spaces.
func mermaidLabel(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "\n", " ", "\r", " ", "`", "#96;").Replace(s)
}

// Section is the upstream dashboard's section about the fan-out of
// upstream's package pkg: the picture, then every follower's state.
func Section(upstream, pkg string, progress map[string]string) string {
	var s strings.Builder
	fmt.Fprintf(&s, bot.FanOutHeading+"`%s` to downstream repositories\n\n%s\n| repository | state |\n|---|---|\n", pkg,
		fanOutMermaid(upstream+" "+pkg, progress, fanOutMaxNodes))
	repos := make([]string, 0, len(progress))
	for r := range progress {
		repos = append(repos, r)
	}
	sort.Strings(repos)
	for _, r := range repos {
		fmt.Fprintf(&s, "| %s | %s |\n", r, progress[r])
	}
	return s.String()
}

// clip cuts s to n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
