package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitlab"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
)

// glJob is a fake GitLab and the CI job environment of one project on it.
type glJob struct {
	t    *testing.T
	gl   *gitlabtest.Server
	repo forge.Repo
	dir  string
	runs int
}

// run runs `kptbot action` in a job with the pipeline's own variables
// added to the project's, and returns the job's dotenv and JSON reports.
func (j *glJob) run(pipeline map[string]string) (string, Report) {
	j.t.Helper()
	j.runs++
	dir := filepath.Join(j.dir, strconv.Itoa(j.runs))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		j.t.Fatal(err)
	}
	web := strings.TrimSuffix(j.gl.CloneURL(j.repo), ".git")
	env := map[string]string{
		"GITLAB_CI": "true", "CI_PROJECT_PATH": j.repo.FullName, "CI_PROJECT_ID": strconv.FormatInt(j.repo.ID, 10),
		"CI_PROJECT_URL": web, "CI_API_V4_URL": j.gl.URL, "CI_DEFAULT_BRANCH": "main", "CI_PIPELINE_ID": strconv.Itoa(100 + j.runs),
		"CI_JOB_ID": strconv.Itoa(900 + j.runs), "KPTBOT_TOKEN": gitlabtest.Token,
		EnvDotenv: filepath.Join(dir, "kptbot.env"), EnvReport: filepath.Join(dir, "report.json"), EnvCodeQuality: filepath.Join(dir, "cq.json"),
	}
	for k, v := range pipeline {
		env[k] = strings.ReplaceAll(v, "$DIR", dir)
	}
	var stdout, stderr bytes.Buffer
	if _, err := Run(context.Background(), Options{Getenv: lookup(env), Stdout: &stdout, Stderr: &stderr, NewBot: newBot}); err != nil {
		j.t.Fatalf("kptbot action (%s): %v\nstdout:\n%s\nlog:\n%s", pipeline["CI_PIPELINE_SOURCE"], err, stdout.String(), stderr.String())
	}
	dotenv, err := os.ReadFile(env[EnvDotenv])
	if err != nil {
		j.t.Fatal(err)
	}
	b, err := os.ReadFile(env[EnvReport])
	if err != nil {
		j.t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		j.t.Fatal(err)
	}
	return string(dotenv), rep
}

// relay writes a webhook body where a webhook-triggered pipeline finds it
// (TRIGGER_PAYLOAD, a file) and returns the pipeline's variables.
func (j *glJob) relay(body []byte, mode string) map[string]string {
	j.t.Helper()
	p := filepath.Join(j.dir, fmt.Sprintf("trigger-%d.json", j.runs+1))
	if err := os.WriteFile(p, body, 0o644); err != nil {
		j.t.Fatal(err)
	}
	return map[string]string{"CI_PIPELINE_SOURCE": "trigger", "TRIGGER_PAYLOAD": p, "KPTBOT_MODE": mode}
}

// mrPayload is GitLab's real hook body for merge request iid, edited to
// describe this project; prefix is object_attributes (merge request hook)
// or merge_request (note hook).
func (j *glJob) mrPayload(file, prefix string, iid int, head, who string, set map[string]any) []byte {
	j.t.Helper()
	mr := j.gl.MergeRequest(j.repo, iid)
	web := "https://gitlab.example/" + j.repo.FullName
	base := map[string]any{
		"project.id": j.repo.ID, "project.path_with_namespace": j.repo.FullName, "project.name": "edge-1", "project.namespace": "sites",
		"project.git_http_url": j.repo.CloneURL, "project.http_url": j.repo.CloneURL, "project.url": j.repo.CloneURL,
		"project.web_url": web, "project.homepage": web, "project.default_branch": "main",
		"user.username": who, "user.name": who, "user.id": j.gl.UserID(who), "user.email": who + "@example.com",
	}
	draft := strings.HasPrefix(mr.Title, "Draft:")
	for k, v := range map[string]any{
		"iid": iid, "id": iid + 5000, "title": mr.Title, "draft": draft, "work_in_progress": draft, "state": mr.State,
		"source_branch": mr.Source, "target_branch": mr.Target, "source_project_id": j.repo.ID, "target_project_id": j.repo.ID,
		"last_commit.id": head, "author_id": j.gl.UserID(mr.Author), "url": fmt.Sprintf("%s/-/merge_requests/%d", web, iid),
	} {
		base[prefix+"."+k] = v
	}
	return editPayload(j.t, payloads+"/gitlab/"+file, base, set)
}

// TestActionEndToEndGitLab drives a package's lifecycle through `kptbot
// action` GitLab CI jobs: a merge request pipeline reports the commit
// status, a note relayed by a webhook-triggered pipeline proposes, an
// approval relayed the same way merges and tags, and the job's dotenv
// report carries the tag to later jobs — with the real bot, the GitLab
// adapter and real git behind a fake GitLab.
func TestActionEndToEndGitLab(t *testing.T) {
	t.Parallel()
	j := &glJob{t: t, gl: gitlabtest.New(t), dir: t.TempDir()}
	j.repo = forge.Repo{Forge: forge.GitLab, FullName: "acme/sites/edge-1", DefaultBranch: "main"}
	j.gl.Seed(j.repo, "main", map[string][]byte{"pkgs/ns/Kptfile": []byte(e2eKptfile), "pkgs/ns/cm.yaml": []byte(e2eConfigMap)})
	j.repo.ID, j.repo.CloneURL = j.gl.ProjectID(j.repo), j.gl.CloneURL(j.repo)
	for _, u := range []string{"alice", "dana"} {
		j.gl.SetAccess(j.repo, u, gitlabtest.Developer)
	}

	// dana pushes a branch and opens a Draft MR (made with the API token,
	// then attributed to her, as the adapter's own tests do).
	client, err := gitlab.NewClient(nil, j.gl.URL, gitlabtest.Token)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cm := strings.Replace(e2eConfigMap, `replicas: "1"`, `replicas: "3"`, 1)
	head, err := client.PushFiles(ctx, j.repo, "scale", "", "main", map[string][]byte{"pkgs/ns/cm.yaml": []byte(cm)}, "scale to 3")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := client.OpenChange(ctx, j.repo, forge.ChangeSpec{Head: "scale", Base: "main", Title: "scale ns", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	n := ch.Number
	j.gl.SetAuthor(j.repo, n, "dana")

	// The merge request pipeline.
	_, rep := j.run(map[string]string{
		"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": strconv.Itoa(n), "CI_MERGE_REQUEST_TITLE": "Draft: scale ns",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "scale", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_COMMIT_SHA": head,
		"CI_MERGE_REQUEST_PROJECT_ID": strconv.FormatInt(j.repo.ID, 10), "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": strconv.FormatInt(j.repo.ID, 10),
		"CI_MERGE_REQUEST_PROJECT_PATH": j.repo.FullName, "GITLAB_USER_LOGIN": "dana", "KPTBOT_MODE": ModeEvent,
	})
	if st, ok := j.gl.Status(j.repo, head, "kptbot/pkgs/ns"); !ok || st.State != "success" {
		t.Fatalf("commit status on the draft = %+v, %v; report %+v", st, ok, rep)
	}
	if len(rep.Outcome.Checks) == 0 {
		t.Errorf("the JSON report has no check: %+v", rep)
	}

	// dana's "/kptbot propose" note, relayed by a webhook-triggered pipeline.
	id := j.gl.AddNote(j.repo, n, "dana", "/kptbot propose")
	j.run(j.relay(j.mrPayload("note_merge_request.json", "merge_request", n, head, "dana", map[string]any{
		"project_id": j.repo.ID, "object_attributes.id": id, "object_attributes.note": "/kptbot propose", "object_attributes.description": "/kptbot propose",
		"object_attributes.author_id": j.gl.UserID("dana"), "object_attributes.noteable_id": n + 5000, "object_attributes.project_id": j.repo.ID,
		"object_attributes.action": "create", "object_attributes.system": false,
	}), ModeEvent))
	if mr := j.gl.MergeRequest(j.repo, n); mr.Title != "scale ns" {
		t.Fatalf("after /kptbot propose the title is %q", mr.Title)
	}

	// alice approves; the relayed hook publishes, then the job reconciles.
	j.gl.Approve(j.repo, n, "alice")
	dotenv, rep := j.run(j.relay(j.mrPayload("derived/merge_request_approved.json", "object_attributes", n, head, "alice",
		map[string]any{"object_attributes.action": "approved"}), ModeDefault))
	if mr := j.gl.MergeRequest(j.repo, n); mr.State != "merged" || j.gl.Merges(j.repo) != 1 {
		t.Fatalf("after alice's approval: state %s, merges %d; report %+v", mr.State, j.gl.Merges(j.repo), rep)
	}
	tags, err := client.ListTags(ctx, j.repo)
	if err != nil || len(tags) != 1 || tags[0].Name != "pkgs/ns/v1" {
		t.Fatalf("tags %v (%v), want pkgs/ns/v1", tags, err)
	}
	if !strings.Contains(dotenv, "KPTBOT_PUBLISHED=pkgs/ns/v1\n") || !strings.Contains(dotenv, "KPTBOT_ERRORS=0\n") {
		t.Errorf("dotenv report:\n%s", dotenv)
	}
	if len(rep.Published) != 1 || rep.Published[0] != "pkgs/ns/v1" || !strings.HasPrefix(rep.Trigger, "Merge Request Hook (change.approved") {
		t.Errorf("JSON report %+v", rep)
	}
}
