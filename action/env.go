package action

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/kptbot/kptbot/forge"
)

// Platform is the CI system a run happens in.
type Platform string

// Platforms kptbot detects.
const (
	GitHubActions Platform = "github-actions"
	GitLabCI      Platform = "gitlab-ci"
)

// Env is everything a run learns from its environment.
type Env struct {
	Platform Platform
	Inputs   Inputs
	// Repo is the repository the run belongs to: the one the token is for,
	// which is reconciled and the only one events are accepted for.
	Repo forge.Repo
	// APIURL is the forge's API root (GITHUB_API_URL, CI_API_V4_URL).
	APIURL string
	// ServerURL is the forge's web root (GITHUB_SERVER_URL, CI_SERVER_URL).
	ServerURL string
	// Workspace is the checkout of Repo, when the job has one.
	Workspace string
	// RunURL links to this run, for the summary.
	RunURL string
	// Trigger is what started the run; zero in reconcile mode.
	Trigger Trigger
	// Where results go: GitHub's GITHUB_OUTPUT and GITHUB_STEP_SUMMARY
	// files, or the GitLab job's dotenv, JSON and Code Quality report
	// artifacts. An empty path skips that file.
	OutputFile, SummaryFile                 string
	DotenvFile, ReportFile, CodeQualityFile string
}

// Trigger is what started a run: one event to hand to the bot, or a request
// to resync the repository (a schedule, a manual run, an upstream's
// dispatch), which is a reconcile.
type Trigger struct {
	// Event is the normalized event; nil for a resync.
	Event *forge.Event
	// Name is the CI system's own name for the trigger (GITHUB_EVENT_NAME,
	// CI_PIPELINE_SOURCE).
	Name string
	// Reason says in words what started the run, for the log and summary.
	Reason string
}

// Resync reports whether the trigger asks for a reconcile rather than
// carrying an event.
func (t Trigger) Resync() bool { return t.Event == nil }

// Detect reads the environment of a GitHub Actions step or a GitLab CI job:
// which platform, the inputs, the repository, where outputs go and (unless
// the mode is reconcile) the triggering event. getenv is os.Getenv outside
// tests.
func Detect(getenv func(string) string) (Env, error) {
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		return detectGitHub(getenv)
	case getenv("GITLAB_CI") == "true":
		return detectGitLab(getenv)
	}
	return Env{}, fmt.Errorf("not running in GitHub Actions (GITHUB_ACTIONS=true) or GitLab CI (GITLAB_CI=true): " +
		"use `kptbot replay` for a saved event or `kptbot serve` for webhooks")
}

// required reads variables the CI system always sets, naming the first
// missing one.
func required(getenv func(string) string, names ...string) ([]string, error) {
	out := make([]string, len(names))
	for i, n := range names {
		if out[i] = strings.TrimSpace(getenv(n)); out[i] == "" {
			return nil, fmt.Errorf("%s is not set: it is set by the CI system, so this is not a CI job (or the variable was overridden)", n)
		}
	}
	return out, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func detectGitHub(getenv func(string) string) (Env, error) {
	v, err := required(getenv, "GITHUB_REPOSITORY", "GITHUB_EVENT_NAME")
	if err != nil {
		return Env{}, err
	}
	if owner, name, ok := strings.Cut(v[0], "/"); !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return Env{}, fmt.Errorf("GITHUB_REPOSITORY %q: expected owner/name", v[0])
	}
	in, err := readInputs(getenv, "GITHUB_TOKEN")
	if err != nil {
		return Env{}, err
	}
	server := strings.TrimRight(orDefault(getenv("GITHUB_SERVER_URL"), "https://github.com"), "/")
	env := Env{
		Platform:    GitHubActions,
		Inputs:      in,
		APIURL:      orDefault(getenv("GITHUB_API_URL"), "https://api.github.com"),
		ServerURL:   server,
		Workspace:   getenv("GITHUB_WORKSPACE"),
		OutputFile:  getenv("GITHUB_OUTPUT"),
		SummaryFile: getenv("GITHUB_STEP_SUMMARY"),
		Repo: forge.Repo{
			Forge:    forge.GitHub,
			FullName: v[0],
			// The web URL with .git is the clone URL on github.com and on
			// GitHub Enterprise Server alike.
			CloneURL: server + "/" + v[0] + ".git",
		},
	}
	if id, err := strconv.ParseInt(getenv("GITHUB_REPOSITORY_ID"), 10, 64); err == nil {
		env.Repo.ID = id
	}
	if runID := getenv("GITHUB_RUN_ID"); runID != "" {
		env.RunURL = server + "/" + v[0] + "/actions/runs/" + runID
	}
	var body []byte
	if p := getenv("GITHUB_EVENT_PATH"); p != "" {
		if body, err = os.ReadFile(p); err != nil {
			return Env{}, fmt.Errorf("reading the event payload (GITHUB_EVENT_PATH): %w", err)
		}
		env.Repo.DefaultBranch = payloadDefaultBranch(body)
	}
	if in.Mode == ModeReconcile {
		env.Trigger = Trigger{Name: v[1], Reason: v[1] + ": reconcile of " + v[0]}
		return env, nil
	}
	if body == nil {
		return Env{}, fmt.Errorf("GITHUB_EVENT_PATH is not set: the %s event cannot be read (mode %q reconciles without it)", v[1], ModeReconcile)
	}
	delivery := "github-actions/" + orDefault(getenv("GITHUB_RUN_ID"), "0") + "/" + orDefault(getenv("GITHUB_RUN_ATTEMPT"), "1")
	if env.Trigger, err = githubTrigger(v[1], delivery, body, env.Repo); err != nil {
		return Env{}, err
	}
	return env, nil
}

// payloadDefaultBranch reads repository.default_branch from an event
// payload, when it has one.
func payloadDefaultBranch(body []byte) string {
	var p struct {
		Repository struct {
			DefaultBranch string `json:"default_branch"`
		} `json:"repository"`
	}
	if json.Unmarshal(body, &p) != nil {
		return ""
	}
	return p.Repository.DefaultBranch
}

// LogValue keeps the token out of logs however an Env is logged.
func (e Env) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("platform", string(e.Platform)),
		slog.String("repo", e.Repo.FullName),
		slog.String("api", e.APIURL),
		slog.String("mode", modeName(e.Inputs.Mode)),
		slog.Bool("dryRun", e.Inputs.DryRun),
		slog.String("trigger", e.Trigger.Name),
	)
}

func modeName(m string) string {
	if m == ModeDefault {
		return "event, then reconcile"
	}
	return m
}
