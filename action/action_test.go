package action

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
)

const payloads = "../testdata/webhooks"

func githubEnv(extra map[string]string) map[string]string {
	env := map[string]string{
		"GITHUB_ACTIONS":    "true",
		"GITHUB_REPOSITORY": "Codertocat/Hello-World",
		"GITHUB_EVENT_NAME": "pull_request",
		"GITHUB_EVENT_PATH": payloads + "/github/pull_request/opened.payload.json",
		"INPUT_TOKEN":       "t0ken",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

func gitlabEnv(extra map[string]string) map[string]string {
	env := map[string]string{
		"GITLAB_CI":          "true",
		"CI_PROJECT_PATH":    "gitlabhq/gitlab-test",
		"CI_API_V4_URL":      "https://gitlab.com/api/v4",
		"CI_PIPELINE_SOURCE": "schedule",
		"KPTBOT_TOKEN":       "t0ken",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

func lookup(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// TestDetectErrors checks that every unusable environment is refused with a
// message naming the variable or input at fault.
func TestDetectErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "event.json")
	if err := os.WriteFile(notJSON, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no CI", map[string]string{"CI": "true"}, "not running in GitHub Actions"},
		{"GITHUB_ACTIONS not true", map[string]string{"GITHUB_ACTIONS": "1"}, "not running in GitHub Actions"},
		{"no repository", githubEnv(map[string]string{"GITHUB_REPOSITORY": ""}), "GITHUB_REPOSITORY is not set"},
		{"bad repository", githubEnv(map[string]string{"GITHUB_REPOSITORY": "just-a-name"}), `GITHUB_REPOSITORY "just-a-name": expected owner/name`},
		{"no event name", githubEnv(map[string]string{"GITHUB_EVENT_NAME": ""}), "GITHUB_EVENT_NAME is not set"},
		{"no token", githubEnv(map[string]string{"INPUT_TOKEN": ""}), "input token: no token"},
		{"bad mode", githubEnv(map[string]string{"INPUT_MODE": "all"}), `input mode: "all": expected "event", "reconcile" or empty`},
		{"bad dry-run", githubEnv(map[string]string{"INPUT_DRY-RUN": "yes"}), `input dry-run: "yes": expected true or false`},
		{"bad log-level", githubEnv(map[string]string{"INPUT_LOG-LEVEL": "loud"}), `input log-level: "loud": expected debug, info, warn or error`},
		{"bad write-mode", githubEnv(map[string]string{"INPUT_WRITE-MODE": "one"}), `input write-mode: "one": expected "standard" or "single"`},
		{"config outside", githubEnv(map[string]string{"INPUT_CONFIG": "../other/kptbot.yaml"}), "input config: \"../other/kptbot.yaml\": expected a slash path inside the repository"},
		{"config absolute", githubEnv(map[string]string{"INPUT_CONFIG": "/etc/kptbot.yaml"}), "input config"},
		{"no event path", githubEnv(map[string]string{"GITHUB_EVENT_PATH": ""}), "GITHUB_EVENT_PATH is not set: the pull_request event cannot be read"},
		{"missing event file", githubEnv(map[string]string{"GITHUB_EVENT_PATH": filepath.Join(dir, "nope.json")}), "reading the event payload (GITHUB_EVENT_PATH)"},
		{"bad event file", githubEnv(map[string]string{"GITHUB_EVENT_PATH": notJSON}), "reading the pull_request event (GITHUB_EVENT_PATH): webhook payload cannot be parsed"},
		{"event for another repo", githubEnv(map[string]string{"GITHUB_REPOSITORY": "someone/else"}), "the pull_request event is for Codertocat/Hello-World but the workflow runs in someone/else"},
		{"gitlab no project", gitlabEnv(map[string]string{"CI_PROJECT_PATH": ""}), "CI_PROJECT_PATH is not set"},
		{"gitlab no pipeline source", gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": ""}), "CI_PIPELINE_SOURCE is not set"},
		{"gitlab no token", gitlabEnv(map[string]string{"KPTBOT_TOKEN": ""}), "or GITLAB_TOKEN"},
		{"gitlab MR without iid", gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": "merge_request_event"}), "CI_MERGE_REQUEST_IID is not set"},
		{"gitlab MR bad iid", gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": "x",
			"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "a", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main"}), `CI_MERGE_REQUEST_IID "x": expected a positive number`},
		{"gitlab MR pipeline in the fork", gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": "3",
			"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "a", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_MERGE_REQUEST_PROJECT_PATH": "upstream/project"}),
			"kptbot acts on the target project"},
		{"gitlab hook without payload", gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": "trigger", "KPTBOT_EVENT": "Note Hook"}), "KPTBOT_PAYLOAD: not set"},
		{"gitlab hook with bad payload", gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": "trigger", "KPTBOT_EVENT": "Push Hook", "KPTBOT_PAYLOAD": `{"object_kind": 1}`}),
			"the relayed Push Hook: gitlab: webhook payload cannot be parsed"},
		{"gitlab relayed for another project", gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": "trigger", "TRIGGER_PAYLOAD": payloads + "/gitlab/push.json"}),
			"the relayed Push Hook is for mike/diaspora but the pipeline runs in gitlabhq/gitlab-test"},
		{"gitlab missing payload file", gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": "trigger", "TRIGGER_PAYLOAD": filepath.Join(dir, "nope")}), "TRIGGER_PAYLOAD: open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Detect(lookup(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Detect: got %v, want an error containing %q", err, tc.want)
			}
			if tok := tc.env["INPUT_TOKEN"]; tok != "" && strings.Contains(err.Error(), tok) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

// TestDetectTriggers checks how each trigger is classified: an event to
// handle, or a resync.
func TestDetectTriggers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		env      map[string]string
		wantKind forge.EventKind // "" for a resync
	}{
		{"pull_request", githubEnv(nil), forge.EventChangeOpened},
		{"pull_request_target", githubEnv(map[string]string{"GITHUB_EVENT_NAME": "pull_request_target"}), forge.EventChangeOpened},
		{"workflow_dispatch", githubEnv(map[string]string{"GITHUB_EVENT_NAME": "workflow_dispatch"}), ""},
		{"workflow_run", githubEnv(map[string]string{"GITHUB_EVENT_NAME": "workflow_run"}), ""},
		{"unknown workflow event", githubEnv(map[string]string{"GITHUB_EVENT_NAME": "watch"}), forge.EventIgnored},
		{"gitlab push", gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": "push"}), ""},
		{"gitlab web", gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": "web"}), ""},
		{"gitlab trigger API body", gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": "trigger", "TRIGGER_PAYLOAD": payloads + "/gitlab/pipeline.json"}), ""},
		{"gitlab MR from a fork", gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": "3",
			"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "a", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
			"CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "7", "CI_MERGE_REQUEST_PROJECT_ID": "8"}), forge.EventChangeSynchronized},
		{"reconcile mode skips the event", githubEnv(map[string]string{"INPUT_MODE": "reconcile", "GITHUB_EVENT_PATH": ""}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, err := Detect(lookup(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantKind == "" {
				if !env.Trigger.Resync() {
					t.Fatalf("got event %s, want a resync", env.Trigger.Event.Kind)
				}
				return
			}
			if env.Trigger.Resync() || env.Trigger.Event.Kind != tc.wantKind {
				t.Fatalf("got trigger %+v, want a %s event", env.Trigger, tc.wantKind)
			}
			if tc.name == "gitlab MR from a fork" && !env.Trigger.Event.Change.FromFork {
				t.Error("a merge request from another project is not marked FromFork")
			}
		})
	}
}

// TestGitLabMergeRequestForkRule runs merge request pipelines through
// Detect: only a merge request whose source and target project ids are the
// same well-formed id is not a fork (a fork never gets secrets).
func TestGitLabMergeRequestForkRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		source, target string
		wantFork       bool
	}{
		{"same project", "42", "42", false},
		{"another project", "7", "42", true},
		{"source id missing", "", "42", true},
		{"target id missing", "42", "", true},
		{"both missing", "", "", true},
		{"leading zero", "042", "42", true},
		{"not a number on both sides", "x", "x", true},
		{"negative on both sides", "-1", "-1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, err := Detect(lookup(gitlabEnv(map[string]string{"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": "3",
				"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "a", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
				"CI_MERGE_REQUEST_SOURCE_PROJECT_ID": tc.source, "CI_MERGE_REQUEST_PROJECT_ID": tc.target})))
			if err != nil {
				t.Fatal(err)
			}
			if ch := env.Trigger.Event.Change; ch == nil || ch.FromFork != tc.wantFork {
				t.Fatalf("change %+v: FromFork want %v", ch, tc.wantFork)
			}
		})
	}
}

func TestCommandEscaping(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    bot.Problem
		want string
	}{
		{bot.Problem{Severity: bot.SeverityError, Message: "plain"}, "::error title=kptbot::plain"},
		{bot.Problem{Severity: bot.SeverityWarning, Package: "a,b:c", File: "dir/f%1.yaml", Line: 3, Message: "50% done\r\nnext: line, more"},
			"::warning title=kptbot%3A a%2Cb%3Ac,file=dir/f%251.yaml,line=3::50%25 done%0D%0Anext: line, more"},
		{bot.Problem{Severity: bot.SeverityError, File: "x.yaml", Message: "no line"}, "::error title=kptbot,file=x.yaml::no line"},
		{bot.Problem{Severity: bot.SeverityError, Message: "::error::injected\n::set-output name=x::y"}, "::error title=kptbot::::error::injected%0A::set-output name=x::y"},
	} {
		if got := problemCommand(tc.p); got != tc.want {
			t.Errorf("problemCommand(%+v):\n got %s\nwant %s", tc.p, got, tc.want)
		}
		if strings.ContainsAny(problemCommand(tc.p), "\r\n") {
			t.Errorf("a command spans lines: %q", problemCommand(tc.p))
		}
	}
}

// TestOutputsCannotBeEndedEarly checks that no value can close its own
// heredoc block, whatever it holds.
func TestOutputsCannotBeEndedEarly(t *testing.T) {
	t.Parallel()
	out := bot.Outcome{Tags: []bot.TagRef{{Name: "a/v1"}, {Name: "ghadelimiter_x\nchanges<<EOF"}}}
	b, err := Outputs(out)
	if err != nil {
		t.Fatal(err)
	}
	got := parseOutputs(t, string(b))
	if got[OutputPublished] != "a/v1\nghadelimiter_x\nchanges<<EOF" {
		t.Errorf("published = %q", got[OutputPublished])
	}
	if !strings.HasPrefix(got[OutputChanges], `{"tags":[`) {
		t.Errorf("changes = %q", got[OutputChanges])
	}
	var sb strings.Builder
	if err := writeOutput(&sb, "bad\nname", "v"); err == nil {
		t.Error("an output name with a line break was accepted")
	}
}

// parseOutputs reads a GITHUB_OUTPUT file as the runner does.
func parseOutputs(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] == "" {
			continue
		}
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			t.Fatalf("line %d: %q is not name<<DELIMITER", i+1, lines[i])
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("output %s: no closing delimiter", name)
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

func TestMarkdownEscaping(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, cell, inline string }{
		{"a | b", `a \| b`, "`a \\| b`"},
		{"<script>x</script>", "&lt;script&gt;x&lt;/script&gt;", "`<script>x</script>`"},
		{"two\nlines", "two<br>lines", "`two lines`"},
		{"has `code`", "has `code`", "`` has `code` ``"},
	} {
		if got := cell(tc.in); got != tc.cell {
			t.Errorf("cell(%q) = %q, want %q", tc.in, got, tc.cell)
		}
		if got := inline(tc.in); got != tc.inline {
			t.Errorf("inline(%q) = %q, want %q", tc.in, got, tc.inline)
		}
	}
	if got := link("#1", "javascript:alert(1)"); got != "#1" {
		t.Errorf("a non-http link was kept: %s", got)
	}
}

func TestDotenvLimit(t *testing.T) {
	t.Parallel()
	var out bot.Outcome
	for i := 0; i < 400; i++ {
		out.Tags = append(out.Tags, bot.TagRef{Name: "sites/edge-000/nginx/v1"})
	}
	b, dropped := Dotenv(out, 0)
	if !dropped || len(b) > dotenvLimit || strings.Contains(string(b), "KPTBOT_PUBLISHED") {
		t.Fatalf("dropped=%v, %d bytes:\n%s", dropped, len(b), b)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if k, v, ok := strings.Cut(line, "="); !ok || k == "" || strings.ContainsAny(v, " \"'") {
			t.Errorf("line %q is not a GitLab dotenv line", line)
		}
	}
}

// TestRunFailures checks that a run that cannot start fails with the
// cause, and still reports on GitHub.
func TestRunFailures(t *testing.T) {
	t.Parallel()
	newBot := func(context.Context, Setup) (Bot, error) { return nil, errors.New("bad credentials") }
	dir := t.TempDir()
	env := githubEnv(map[string]string{"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md")})
	var stdout, stderr bytes.Buffer
	_, err := Run(context.Background(), Options{Getenv: lookup(env), Stdout: &stdout, Stderr: &stderr, NewBot: newBot})
	if err == nil || !strings.Contains(err.Error(), "setting up the bot: bad credentials") {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(stdout.String(), "::error title=kptbot::setting up the bot: bad credentials") {
		t.Errorf("no annotation:\n%s", stdout.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "summary.md")); !strings.Contains(string(b), "**Failed:** setting up the bot") {
		t.Errorf("summary:\n%s", b)
	}

	stdout.Reset()
	_, err = Run(context.Background(), Options{Getenv: lookup(githubEnv(map[string]string{"INPUT_MODE": "x"})), Stdout: &stdout, Stderr: &stderr, NewBot: newBot})
	if err == nil || !strings.HasPrefix(stdout.String(), "::error::kptbot: input mode") {
		t.Errorf("Run with a bad input: %v, stdout %q", err, stdout.String())
	}
}

// *bot.Bot is what `kptbot action` runs: it must satisfy Bot.
var _ Bot = (*bot.Bot)(nil)
