package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge/github/githubtest"
)

// TestActionCommand runs `kptbot action` as a workflow step would, on a
// pull_request event, against a fake GitHub and real git.
func TestActionCommand(t *testing.T) {
	gh := githubtest.New(t)
	repo, pr, event := openedDraft(t, gh, "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ns\n")
	dir := t.TempDir()
	for k, v := range map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/site-a", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": event,
		"GITHUB_API_URL": gh.URL, "GITHUB_SERVER_URL": strings.TrimSuffix(gh.GitURL, "/"), "GITHUB_RUN_ID": "7", "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_OUTPUT": filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md"),
		"INPUT_TOKEN": "ghs_actionToken", "INPUT_MODE": "event", "KPTBOT_BOT_LOGIN": "kptbot[bot]",
	} {
		t.Setenv(k, v)
	}
	out, stderr, code := kptbot(t, "action")
	if code != 0 {
		t.Fatalf("kptbot action: exit %d\n%s\n%s", code, out, stderr)
	}
	if c, ok := gh.Check(repo, pr.Head.SHA, "kptbot/ns"); !ok || c.Conclusion != "success" {
		t.Errorf("check run = %+v, %v", c, ok)
	}
	outputs, _ := os.ReadFile(filepath.Join(dir, "output"))
	if !strings.Contains(string(outputs), "changes<<") || !strings.Contains(string(outputs), "kptbot/ns") {
		t.Errorf("step outputs:\n%s", outputs)
	}
	if strings.Contains(out+stderr+string(outputs), "ghs_actionToken") {
		t.Error("the token was printed")
	}
}
