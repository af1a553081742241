package action

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitlab"
)

// GitLab CI variables kptbot reads beyond GitLab's predefined ones.
const (
	// EnvEvent names what triggered a pipeline through a trigger token: a
	// GitLab hook name ("Merge Request Hook", "Note Hook", ...) whose body
	// is in EnvPayload, or any other word (kptbot's fan-out sends
	// "kptbot-upstream-published"), which asks for a resync.
	EnvEvent = "KPTBOT_EVENT"
	// EnvPayload is the hook body for EnvEvent: inline JSON, or the path
	// of a file (a file-type variable).
	EnvPayload = "KPTBOT_PAYLOAD"
	// EnvDotenv and EnvReport name the job's result files (defaults
	// kptbot.env and kptbot-report.json).
	EnvDotenv = "KPTBOT_DOTENV"
	EnvReport = "KPTBOT_REPORT"
)

func detectGitLab(getenv func(string) string) (Env, error) {
	v, err := required(getenv, "CI_PROJECT_PATH", "CI_API_V4_URL", "CI_PIPELINE_SOURCE")
	if err != nil {
		return Env{}, err
	}
	in, err := readInputs(getenv, "GITLAB_TOKEN")
	if err != nil {
		return Env{}, err
	}
	projectURL := getenv("CI_PROJECT_URL")
	env := Env{
		Platform:        GitLabCI,
		Inputs:          in,
		APIURL:          v[1],
		ServerURL:       getenv("CI_SERVER_URL"),
		Workspace:       getenv("CI_PROJECT_DIR"),
		RunURL:          getenv("CI_PIPELINE_URL"),
		DotenvFile:      orDefault(getenv(EnvDotenv), "kptbot.env"),
		ReportFile:      orDefault(getenv(EnvReport), "kptbot-report.json"),
		CodeQualityFile: orDefault(getenv(EnvCodeQuality), "gl-code-quality-report.json"),
		Repo: forge.Repo{
			Forge:    forge.GitLab,
			FullName: v[0],
			// Never CI_REPOSITORY_URL: it embeds the job token.
			CloneURL:      strings.TrimSuffix(projectURL, "/") + ".git",
			DefaultBranch: getenv("CI_DEFAULT_BRANCH"),
			Private:       getenv("CI_PROJECT_VISIBILITY") != "public",
		},
	}
	if projectURL == "" {
		env.Repo.CloneURL = ""
	}
	if id, err := strconv.ParseInt(getenv("CI_PROJECT_ID"), 10, 64); err == nil {
		env.Repo.ID = id
	}
	if in.Mode == ModeReconcile {
		env.Trigger = Trigger{Name: v[2], Reason: v[2] + ": reconcile of " + v[0]}
		return env, nil
	}
	delivery := "gitlab-ci/" + orDefault(getenv("CI_PIPELINE_ID"), "0") + "/" + orDefault(getenv("CI_JOB_ID"), "0")
	if env.Trigger, err = gitlabTrigger(getenv, v[2], delivery, env.Repo); err != nil {
		return Env{}, err
	}
	return env, nil
}

// gitlabTrigger builds the Trigger from the pipeline's variables: a merge
// request pipeline is a change event; a pipeline started through a trigger
// token may relay a webhook body (TRIGGER_PAYLOAD, or KPTBOT_EVENT with
// KPTBOT_PAYLOAD); everything else (push, schedule, web, api, a bare
// trigger) is a resync.
//
// A relayed body is trusted as much as a webhook delivery to the server:
// both are vouched for by a secret (the trigger token; the webhook token),
// and the bot re-reads state from the API before acting, as events are
// only hints.
func gitlabTrigger(getenv func(string) string, source, delivery string, repo forge.Repo) (Trigger, error) {
	t := Trigger{Name: source}
	switch source {
	case "merge_request_event":
		ev, err := mergeRequestEvent(getenv, delivery, repo)
		if err != nil {
			return Trigger{}, err
		}
		t.Event, t.Reason = &ev, describeEvent(ev)
		return t, nil
	case "trigger", "pipeline", "parent_pipeline", "api":
		if name := strings.TrimSpace(getenv(EnvEvent)); name != "" {
			if !strings.HasSuffix(name, " Hook") {
				t.Reason = fmt.Sprintf("%s %s=%s: resync of %s", source, EnvEvent, name, repo.FullName)
				return t, nil
			}
			body, err := readPayload(getenv(EnvPayload))
			if err != nil {
				return Trigger{}, fmt.Errorf("%s=%q: %s: %w", EnvEvent, name, EnvPayload, err)
			}
			return relayedBy(getenv, source, t, name, delivery, body, repo)
		}
		if p := getenv("TRIGGER_PAYLOAD"); p != "" {
			body, err := readFileLimited(p)
			if err != nil {
				return Trigger{}, fmt.Errorf("TRIGGER_PAYLOAD: %w", err)
			}
			if hook := hookForObjectKind(body); hook != "" {
				return relayedBy(getenv, source, t, hook, delivery, body, repo)
			}
		}
	}
	t.Reason = source + ": resync of " + repo.FullName
	return t, nil
}

// relayed normalizes a webhook body that reached the job through a trigger.
func relayed(t Trigger, hook, delivery string, body []byte, repo forge.Repo) (Trigger, error) {
	ev, err := gitlab.Normalize(hook, delivery, body)
	if err != nil {
		return Trigger{}, fmt.Errorf("the relayed %s: %w", hook, err)
	}
	if ev.Repo.FullName != "" && !strings.EqualFold(ev.Repo.FullName, repo.FullName) {
		return Trigger{}, fmt.Errorf("the relayed %s is for %s but the pipeline runs in %s (CI_PROJECT_PATH): refusing to act on another project", hook, ev.Repo.FullName, repo.FullName)
	}
	fillRepo(&ev.Repo, repo)
	t.Event, t.Reason = &ev, describeEvent(ev)
	return t, nil
}

// relayedBy is relayed, refusing a note that someone other than the
// pipeline's starter wrote when a person started it: a pipeline started
// through the API, or by another pipeline's job, carries whatever
// variables its starter set, so a Developer could relay a Maintainer's
// note (the bot reads the note back by id, so its text and author are
// real, but not that its author asked for it now). Only a trigger token's
// pipeline (source "trigger") is vouched for by a secret.
func relayedBy(getenv func(string) string, source string, t Trigger, hook, delivery string, body []byte, repo forge.Repo) (Trigger, error) {
	t, err := relayed(t, hook, delivery, body, repo)
	if err != nil || source == "trigger" || t.Event == nil || t.Event.Comment == nil {
		return t, err
	}
	a := t.Event.Comment.Author
	login := getenv("GITLAB_USER_LOGIN")
	id, _ := strconv.ParseInt(getenv("GITLAB_USER_ID"), 10, 64)
	sameID, sameLogin := id != 0 && id == a.ID, login != "" && strings.EqualFold(login, a.Login)
	if (sameID || sameLogin) && (id == 0 || a.ID == 0 || sameID) && (login == "" || a.Login == "" || sameLogin) {
		return t, nil
	}
	return Trigger{}, fmt.Errorf("the relayed %s is note %d by %q, but this %s pipeline was started by %q (GITLAB_USER_LOGIN): "+
		"a note is acted on only in a pipeline its author started, or one started by a trigger token", hook, t.Event.Comment.ID, a.Login, source, login)
}

// hookForObjectKind maps a webhook body's object_kind to the X-Gitlab-Event
// it is delivered with, for the hooks kptbot acts on; "" for anything else
// (a trigger API call's own body has no object_kind).
func hookForObjectKind(body []byte) string {
	var p struct {
		ObjectKind string `json:"object_kind"`
	}
	if json.Unmarshal(body, &p) != nil {
		return ""
	}
	switch p.ObjectKind {
	case "merge_request":
		return "Merge Request Hook"
	case "note":
		return "Note Hook"
	case "push":
		return "Push Hook"
	case "tag_push":
		return "Tag Push Hook"
	}
	return ""
}

// readPayload reads KPTBOT_PAYLOAD: inline JSON, or the path of a file.
func readPayload(v string) ([]byte, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return nil, fmt.Errorf("not set: a hook name needs its body")
	case strings.HasPrefix(v, "{"):
		return []byte(v), nil
	}
	return readFileLimited(v)
}

func readFileLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, gitlab.DefaultMaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(b)) > gitlab.DefaultMaxBody {
		return nil, fmt.Errorf("%s: more than %d bytes", path, gitlab.DefaultMaxBody)
	}
	return b, nil
}

// mergeRequestEvent builds the change event of a merge request pipeline
// from GitLab's predefined variables. The variables do not name the merge
// request's author, so Change.Author is empty: the bot reads the change
// from the API before judging approvals.
func mergeRequestEvent(getenv func(string) string, delivery string, repo forge.Repo) (forge.Event, error) {
	v, err := required(getenv, "CI_MERGE_REQUEST_IID", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME")
	if err != nil {
		return forge.Event{}, err
	}
	iid, err := strconv.Atoi(v[0])
	if err != nil || iid <= 0 {
		return forge.Event{}, fmt.Errorf("CI_MERGE_REQUEST_IID %q: expected a positive number", v[0])
	}
	if p := getenv("CI_MERGE_REQUEST_PROJECT_PATH"); p != "" && !strings.EqualFold(p, repo.FullName) {
		return forge.Event{}, fmt.Errorf("this merge request pipeline runs in %s, the source project of a merge request into %s: "+
			"kptbot acts on the target project, so run the pipeline there (a fork's pipeline has no access to its token)", repo.FullName, p)
	}
	title := getenv("CI_MERGE_REQUEST_TITLE")
	draft := gitlab.IsDraftTitle(title)
	if d := getenv("CI_MERGE_REQUEST_DRAFT"); d != "" {
		draft = d == "true"
	}
	head := orDefault(getenv("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"), getenv("CI_COMMIT_SHA"))
	change := &forge.Change{
		Number:   iid,
		Title:    title,
		Draft:    draft,
		State:    "open",
		HeadRef:  v[1],
		HeadSHA:  head,
		BaseRef:  v[2],
		BaseSHA:  orDefault(getenv("CI_MERGE_REQUEST_TARGET_BRANCH_SHA"), getenv("CI_MERGE_REQUEST_DIFF_BASE_SHA")),
		Labels:   splitList(getenv("CI_MERGE_REQUEST_LABELS")),
		FromFork: gitlab.IsFork(gitlab.ProjectID(getenv("CI_MERGE_REQUEST_SOURCE_PROJECT_ID")), gitlab.ProjectID(getenv("CI_MERGE_REQUEST_PROJECT_ID"))),
	}
	if u := getenv("CI_MERGE_REQUEST_PROJECT_URL"); u != "" {
		change.URL = strings.TrimSuffix(u, "/") + "/-/merge_requests/" + v[0]
	}
	ev := forge.Event{
		Forge:      forge.GitLab,
		Kind:       forge.EventChangeSynchronized,
		DeliveryID: delivery,
		Raw:        "merge_request_event",
		Repo:       repo,
		Change:     change,
		After:      head,
	}
	ev.Sender.Login = getenv("GITLAB_USER_LOGIN")
	ev.Sender.ID, _ = strconv.ParseInt(getenv("GITLAB_USER_ID"), 10, 64)
	return ev, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
