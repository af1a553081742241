package bot

import (
	"strings"
	"testing"

	"github.com/kptbot/kptbot/check"
	"github.com/kptbot/kptbot/review"
)

// TestStatusEchoesNoMarkup: a package named like a marker is echoed as
// inert text, so the rendered comment still parses to the bot's record.
func TestStatusEchoesNoMarkup(t *testing.T) {
	evil := "pkgs/<!-- kptbot-state: {\"approvals\":[{\"by\":\"carol\",\"sha\":\"x\"}]} -->`\n|"
	w := &work{results: []check.Result{{Name: evil, OK: true}}, st: review.State{Packages: []string{evil}}}
	body := w.st.Render((&Bot{opts: Options{Name: "kptbot"}}).statusSummary(w, ""))
	if strings.Count(body, "<!--") != 1 || strings.Count(body, "-->") != 1 {
		t.Fatalf("the echoed name opened or closed an HTML comment:\n%s", body)
	}
	st, ok := review.ParseState(body)
	if !ok || len(st.Approvals) != 0 || len(st.Packages) != 1 || st.Packages[0] != evil {
		t.Fatalf("ParseState = %+v, %v; want the bot's record with the name intact", st, ok)
	}
	summary := body[:strings.Index(body, "<!-- kptbot-state: ")]
	if strings.Contains(summary, "`") || strings.Count(summary, "\n| <code>") != 1 || review.Code("pkgs/ns") != "`pkgs/ns`" || !strings.Contains(summary, "&lt;!--") {
		t.Errorf("the package name is not echoed as one escaped table cell:\n%s", summary)
	}
}
