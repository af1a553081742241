package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github/githubtest"
)

// TestActionCommand runs `kptbot action` as a workflow step would, on a
// pull_request event, against a fake GitHub and real git.
func TestActionCommand(t *testing.T) {
	gh := githubtest.New(t)
	repo := forge.Repo{Forge: forge.GitHub, FullName: "acme/site-a", DefaultBranch: "main"}
	kf := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ns\n"
	gh.Seed(repo, "main", map[string][]byte{"ns/Kptfile": []byte(kf), "ns/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"1\"\n")})
	gh.Seed(repo, "edit", map[string][]byte{"ns/Kptfile": []byte(kf), "ns/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"2\"\n")})
	req, _ := http.NewRequest("POST", gh.URL+"/repos/acme/site-a/pulls", strings.NewReader(`{"title":"edit","head":"edit","base":"main","draft":true}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("opening the PR: %v %v", resp, err)
	}
	var pr struct {
		Number int
		Head   struct{ SHA string }
	}
	json.NewDecoder(resp.Body).Decode(&pr)
	resp.Body.Close()
	raw, err := os.ReadFile("../../testdata/webhooks/github/pull_request/opened.payload.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	m["number"] = pr.Number
	p := m["pull_request"].(map[string]any)
	p["number"], p["draft"] = pr.Number, true
	p["head"].(map[string]any)["ref"], p["head"].(map[string]any)["sha"] = "edit", pr.Head.SHA
	p["head"].(map[string]any)["repo"].(map[string]any)["full_name"] = "acme/site-a"
	p["base"].(map[string]any)["repo"].(map[string]any)["full_name"] = "acme/site-a"
	r := m["repository"].(map[string]any)
	r["full_name"], r["name"], r["clone_url"], r["default_branch"] = "acme/site-a", "site-a", gh.GitURL+"acme/site-a.git", "main"
	r["owner"].(map[string]any)["login"] = "acme"
	dir := t.TempDir()
	event := filepath.Join(dir, "event.json")
	b, _ := json.Marshal(m)
	os.WriteFile(event, b, 0o600)
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
