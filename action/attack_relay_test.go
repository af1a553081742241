package action

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitlab"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
)

// TestAttackRelayedNoteFromAnotherUser: in CI mode any Developer can start
// a pipeline through the API (or from another pipeline's job) with
// KPTBOT_EVENT and KPTBOT_PAYLOAD set to a real note someone else wrote.
// Such a relay is refused: the note is acted on only in a pipeline its
// author started (or one a trigger token started). The author's own
// relay still works.
func TestAttackRelayedNoteFromAnotherUser(t *testing.T) {
	t.Parallel()
	j := &glJob{t: t, gl: gitlabtest.New(t), dir: t.TempDir()}
	j.repo = forge.Repo{Forge: forge.GitLab, FullName: "acme/sites/edge-1", DefaultBranch: "main"}
	j.gl.Seed(j.repo, "main", map[string][]byte{"pkgs/ns/Kptfile": []byte(e2eKptfile), "pkgs/ns/cm.yaml": []byte(e2eConfigMap)})
	j.repo.ID, j.repo.CloneURL = j.gl.ProjectID(j.repo), j.gl.CloneURL(j.repo)
	for _, u := range []string{"alice", "dana"} {
		j.gl.SetAccess(j.repo, u, gitlabtest.Developer)
	}
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
	j.gl.SetAuthor(j.repo, n, "alice")
	id := j.gl.AddNote(j.repo, n, "alice", "/kptbot propose")
	note := string(j.mrPayload("note_merge_request.json", "merge_request", n, head, "alice", map[string]any{
		"project_id": j.repo.ID, "object_attributes.id": id, "object_attributes.note": "/kptbot propose", "object_attributes.description": "/kptbot propose",
		"object_attributes.author_id": j.gl.UserID("alice"), "object_attributes.noteable_id": n + 5000, "object_attributes.project_id": j.repo.ID,
		"object_attributes.action": "create", "object_attributes.system": false,
	}))
	run := func(source, starter string) error {
		env := map[string]string{
			"GITLAB_CI": "true", "CI_PROJECT_PATH": j.repo.FullName, "CI_PROJECT_ID": strconv.FormatInt(j.repo.ID, 10),
			"CI_API_V4_URL": j.gl.URL, "CI_DEFAULT_BRANCH": "main", "CI_PIPELINE_ID": "7", "CI_JOB_ID": "8", "KPTBOT_TOKEN": gitlabtest.Token,
			"CI_PIPELINE_SOURCE": source, "GITLAB_USER_LOGIN": starter, "GITLAB_USER_ID": strconv.FormatInt(j.gl.UserID(starter), 10),
			EnvEvent: "Note Hook", EnvPayload: note, "KPTBOT_MODE": ModeEvent,
			EnvDotenv: filepath.Join(j.dir, source+starter+".env"), EnvReport: filepath.Join(j.dir, source+starter+".json"), EnvCodeQuality: filepath.Join(j.dir, source+starter+"-cq.json"),
		}
		var stdout, stderr bytes.Buffer
		_, err := Run(ctx, Options{Getenv: lookup(env), Stdout: &stdout, Stderr: &stderr, NewBot: newBot})
		return err
	}
	for _, source := range []string{"api", "pipeline", "parent_pipeline"} {
		err := run(source, "dana")
		if err == nil || !strings.Contains(err.Error(), "started by") {
			t.Errorf("%s pipeline started by dana relaying alice's note: error %v, want a refusal", source, err)
		}
		if mr := j.gl.MergeRequest(j.repo, n); mr.Title != "Draft: scale ns" {
			t.Fatalf("%s pipeline started by dana acted on alice's note: title %q", source, mr.Title)
		}
	}
	if err := run("api", "alice"); err != nil {
		t.Fatalf("alice relaying her own note: %v", err)
	}
	if mr := j.gl.MergeRequest(j.repo, n); mr.Title != "scale ns" {
		t.Errorf("alice's own relayed note was not acted on: title %q (the legitimate flow broke)", mr.Title)
	}
}
