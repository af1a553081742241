package gitlab

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kptbot/kptbot/forge"
)

const (
	testSecret  = "s3cr3t-webhook-token"
	testMaxBody = 1 << 20
	testdataDir = "../../testdata/webhooks/gitlab"
	zero        = forge.ZeroSHA
)

func load(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdataDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mutate decodes a payload, lets edit change it and encodes it again.
func mutate(t testing.TB, body []byte, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func obj(m map[string]any, key string) map[string]any {
	v, ok := m[key].(map[string]any)
	if !ok {
		v = map[string]any{}
		m[key] = v
	}
	return v
}

func newRequest(hook, token string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webhooks/gitlab", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if hook != "" {
		r.Header.Set(HeaderEvent, hook)
	}
	if token != "" {
		r.Header.Set(HeaderToken, token)
	}
	r.Header.Set(HeaderIdempotencyKey, "idem-1")
	return r
}

var (
	user1 = forge.User{Login: "user1", ID: 1}

	mrRepo = forge.Repo{
		Forge:         forge.GitLab,
		FullName:      "gitlabhq/gitlab-test",
		ID:            1,
		CloneURL:      "http://example.com/gitlabhq/gitlab-test.git",
		DefaultBranch: "master",
	}

	noteRepo = forge.Repo{
		Forge:         forge.GitLab,
		FullName:      "gitlab-org/gitlab-test",
		ID:            5,
		CloneURL:      "http://example.com/gitlab-org/gitlab-test.git",
		DefaultBranch: "master",
	}
)

const mrHead = "da1560886d4f094c3e6c9ef40349f7d38b5d27d7"

// mrChange is the change in merge_request.json and the derived payloads,
// with state and the merge fields adjusted by set.
func mrChange(set func(c *forge.Change)) *forge.Change {
	c := &forge.Change{
		Number:  1,
		Title:   "MS-Viewport",
		State:   "open",
		HeadRef: "ms-viewport",
		HeadSHA: mrHead,
		BaseRef: "master",
		Author:  forge.User{ID: 51},
		Labels:  []string{"API"},
		URL:     "http://example.com/diaspora/merge_requests/1",
	}
	if set != nil {
		set(c)
	}
	return c
}

func mrEvent(kind forge.EventKind, c *forge.Change) forge.Event {
	return forge.Event{Forge: forge.GitLab, Kind: kind, Raw: "Merge Request Hook", Repo: mrRepo, Sender: user1, Change: c}
}

func noteChange() *forge.Change {
	return &forge.Change{
		Number:  1,
		Title:   "Tempora et eos debitis quae laborum et.",
		Body:    "Et voluptas corrupti assumenda temporibus. Architecto cum animi eveniet amet asperiores. Vitae numquam voluptate est natus sit et ad id.",
		State:   "open",
		HeadRef: "master",
		HeadSHA: "562e173be03b8ff2efb05345d12df18815438a4b",
		BaseRef: "markdown",
		Author:  forge.User{ID: 8},
		Labels:  []string{"Afterpod", "Element"},
		URL:     "http://example.com/gitlab-org/gitlab-test/-/merge_requests/1",
	}
}

type webhookCase struct {
	name string
	hook string
	body func(t testing.TB) []byte
	want forge.Event
	// ignoredHas is a substring of want.Ignored for EventIgnored.
	ignoredHas string
}

func file(name string) func(t testing.TB) []byte {
	return func(t testing.TB) []byte { return load(t, name) }
}

func edited(name string, edit func(m map[string]any)) func(t testing.TB) []byte {
	return func(t testing.TB) []byte { return mutate(t, load(t, name), edit) }
}

func ignoredEvent(hook string) forge.Event {
	return forge.Event{Forge: forge.GitLab, Kind: forge.EventIgnored, Raw: hook}
}

func webhookCases() []webhookCase {
	pushRepo := forge.Repo{Forge: forge.GitLab, FullName: "mike/diaspora", ID: 15, CloneURL: "http://example.com/mike/diaspora.git", DefaultBranch: "master"}
	tagRepo := forge.Repo{Forge: forge.GitLab, FullName: "jsmith/example", ID: 1, CloneURL: "http://example.com/jsmith/example.git", DefaultBranch: "master"}
	approved := &forge.Review{State: forge.ReviewApproved, Reviewer: user1, CommitSHA: mrHead}
	dismissed := &forge.Review{State: forge.ReviewDismissed, Reviewer: user1, CommitSHA: mrHead}
	rootUser := forge.User{Login: "root", ID: 1}

	updateNoPush := func(changes map[string]any) func(t testing.TB) []byte {
		return edited("derived/merge_request_update_push.json", func(m map[string]any) {
			delete(obj(m, "object_attributes"), "oldrev")
			m["changes"] = changes
		})
	}

	return []webhookCase{
		{
			name: "tag push",
			hook: "Tag Push Hook",
			body: file("tag_push.json"),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventTagPushed, Raw: "Tag Push Hook",
				Repo: tagRepo, Sender: forge.User{Login: "jsmith", ID: 1},
				Ref: "refs/tags/v1.0.0", Before: zero, After: "82b3d5ae55f7080f1e6022629cdb57bfae7cccc7",
			},
		},
		{
			name: "tag delete",
			hook: "Tag Push Hook",
			body: file("derived/tag_push_delete.json"),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventTagDeleted, Raw: "Tag Push Hook",
				Repo: tagRepo, Sender: forge.User{Login: "jsmith", ID: 1},
				Ref: "refs/tags/v1.0.0", Before: "82b3d5ae55f7080f1e6022629cdb57bfae7cccc7", After: zero,
			},
		},
		{
			name: "branch push",
			hook: "Push Hook",
			body: file("push.json"),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventBranchPushed, Raw: "Push Hook",
				Repo: pushRepo, Sender: forge.User{Login: "jsmith", ID: 4},
				Ref: "refs/heads/master", Before: "95790bf891e76fee5e1747ab589903a6a1f80f22", After: mrHead,
			},
		},
		{
			name: "branch delete",
			hook: "Push Hook",
			body: edited("push.json", func(m map[string]any) {
				m["ref"], m["before"], m["after"], m["checkout_sha"], m["commits"], m["total_commits_count"] = "refs/heads/kptbot/update", mrHead, zero, nil, []any{}, 0
			}),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventBranchDeleted, Raw: "Push Hook",
				Repo: pushRepo, Sender: forge.User{Login: "jsmith", ID: 4},
				Ref: "refs/heads/kptbot/update", Before: mrHead, After: zero,
			},
		},
		{
			name: "push to a subgroup project by a project access token",
			hook: "Push Hook",
			body: edited("push.json", func(m map[string]any) {
				obj(m, "project")["path_with_namespace"] = "platform/edge/blueprints"
				m["user_username"] = "project_15_bot_0d1e2f3a4b5c6d7e"
			}),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventBranchPushed, Raw: "Push Hook",
				Repo:   forge.Repo{Forge: forge.GitLab, FullName: "platform/edge/blueprints", ID: 15, CloneURL: "http://example.com/mike/diaspora.git", DefaultBranch: "master"},
				Sender: forge.User{Login: "project_15_bot_0d1e2f3a4b5c6d7e", ID: 4, Bot: true},
				Ref:    "refs/heads/master", Before: "95790bf891e76fee5e1747ab589903a6a1f80f22", After: mrHead,
			},
		},
		{
			name: "merge request opened",
			hook: "Merge Request Hook",
			body: file("merge_request.json"),
			want: mrEvent(forge.EventChangeOpened, mrChange(nil)),
		},
		{
			name: "merge request opened as draft from a fork",
			hook: "Merge Request Hook",
			body: edited("merge_request.json", func(m map[string]any) {
				a := obj(m, "object_attributes")
				a["title"], a["draft"], a["source_project_id"] = "Draft: MS-Viewport", true, 99
			}),
			want: mrEvent(forge.EventChangeOpened, mrChange(func(c *forge.Change) {
				c.Draft, c.FromFork = true, true // the title without its prefix, as GetChange gives it
			})),
		},
		{
			name: "merge request draft by work_in_progress only",
			hook: "Merge Request Hook",
			body: edited("merge_request.json", func(m map[string]any) {
				obj(m, "object_attributes")["work_in_progress"] = true
			}),
			want: mrEvent(forge.EventChangeOpened, mrChange(func(c *forge.Change) { c.Draft = true })),
		},
		{
			name: "merge request new commits",
			hook: "Merge Request Hook",
			body: file("derived/merge_request_update_push.json"),
			want: mrEvent(forge.EventChangeSynchronized, mrChange(nil)),
		},
		{
			name: "merge request marked ready by changes.draft",
			hook: "Merge Request Hook",
			body: updateNoPush(map[string]any{
				"draft": map[string]any{"previous": true, "current": false},
				"title": map[string]any{"previous": "Draft: MS-Viewport", "current": "MS-Viewport"},
			}),
			want: mrEvent(forge.EventChangeReadyForReview, mrChange(nil)),
		},
		{
			name: "merge request marked ready by title only (older GitLab)",
			hook: "Merge Request Hook",
			body: updateNoPush(map[string]any{
				"title": map[string]any{"previous": "[Draft] MS-Viewport", "current": "MS-Viewport"},
			}),
			want: mrEvent(forge.EventChangeReadyForReview, mrChange(nil)),
		},
		{
			name: "merge request converted to draft",
			hook: "Merge Request Hook",
			body: edited("derived/merge_request_update_push.json", func(m map[string]any) {
				a := obj(m, "object_attributes")
				delete(a, "oldrev")
				a["title"], a["draft"], a["work_in_progress"] = "Draft: MS-Viewport", true, true
				m["changes"] = map[string]any{
					"draft": map[string]any{"previous": false, "current": true},
					"title": map[string]any{"previous": "MS-Viewport", "current": "Draft: MS-Viewport"},
				}
			}),
			want: mrEvent(forge.EventChangeConvertedToDraft, mrChange(func(c *forge.Change) { c.Draft = true })),
		},
		{
			name: "merge request converted to draft by title only",
			hook: "Merge Request Hook",
			body: edited("derived/merge_request_update_push.json", func(m map[string]any) {
				a := obj(m, "object_attributes")
				delete(a, "oldrev")
				a["title"] = "draft: MS-Viewport"
				m["changes"] = map[string]any{"title": map[string]any{"previous": "MS-Viewport", "current": "draft: MS-Viewport"}}
			}),
			want: mrEvent(forge.EventChangeConvertedToDraft, mrChange(func(c *forge.Change) { c.Draft = true })),
		},
		{
			name: "merge request labels edited",
			hook: "Merge Request Hook",
			body: edited("derived/merge_request_update_push.json", func(m map[string]any) {
				delete(obj(m, "object_attributes"), "oldrev")
			}),
			want: mrEvent(forge.EventChangeEdited, mrChange(nil)),
		},
		{
			name: "merge request retitled",
			hook: "Merge Request Hook",
			body: updateNoPush(map[string]any{"title": map[string]any{"previous": "MS-View", "current": "MS-Viewport"}}),
			want: mrEvent(forge.EventChangeEdited, mrChange(nil)),
		},
		{
			name: "merge request closed",
			hook: "Merge Request Hook",
			body: file("derived/merge_request_close.json"),
			want: mrEvent(forge.EventChangeClosed, mrChange(func(c *forge.Change) { c.State = "closed" })),
		},
		{
			name: "merge request reopened",
			hook: "Merge Request Hook",
			body: file("derived/merge_request_reopen.json"),
			want: mrEvent(forge.EventChangeReopened, mrChange(nil)),
		},
		{
			name: "merge request merged",
			hook: "Merge Request Hook",
			body: file("derived/merge_request_merge.json"),
			want: mrEvent(forge.EventChangeMerged, mrChange(func(c *forge.Change) {
				c.State, c.Merged, c.MergeCommitSHA = "merged", true, "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
			})),
		},
		{
			name: "merge request approved (rules satisfied)",
			hook: "Merge Request Hook",
			body: file("derived/merge_request_approved.json"),
			want: func() forge.Event {
				e := mrEvent(forge.EventApproved, mrChange(nil))
				e.Review = approved
				return e
			}(),
		},
		{
			name: "merge request approval (more required)",
			hook: "Merge Request Hook",
			body: file("derived/merge_request_approval.json"),
			want: func() forge.Event {
				e := mrEvent(forge.EventApproved, mrChange(nil))
				e.Review = approved
				return e
			}(),
		},
		{
			name: "merge request unapproved",
			hook: "Merge Request Hook",
			body: file("derived/merge_request_unapproved.json"),
			want: func() forge.Event {
				e := mrEvent(forge.EventUnapproved, mrChange(nil))
				e.Review = dismissed
				return e
			}(),
		},
		{
			name: "merge request unapproval",
			hook: "Merge Request Hook",
			body: file("derived/merge_request_unapproval.json"),
			want: func() forge.Event {
				e := mrEvent(forge.EventUnapproved, mrChange(nil))
				e.Review = dismissed
				return e
			}(),
		},
		{
			name: "merge request with an unknown action",
			hook: "Merge Request Hook",
			body: edited("merge_request.json", func(m map[string]any) { obj(m, "object_attributes")["action"] = "teleport" }),
			want: func() forge.Event {
				e := mrEvent(forge.EventIgnored, mrChange(nil))
				return e
			}(),
			ignoredHas: `"teleport"`,
		},
		{
			name: "real self-managed merge request update with new commits",
			hook: "Merge Request Hook",
			body: file("client-go-testdata/service_merge_request.json"),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventChangeSynchronized, Raw: "Merge Request Hook",
				Repo:   forge.Repo{Forge: forge.GitLab, FullName: "test/woodpecker", ID: 2, CloneURL: "http://10.40.8.5:3200/test/woodpecker.git", DefaultBranch: "master"},
				Sender: forge.User{Login: "test", ID: 2},
				Change: &forge.Change{
					Number: 2, Title: "Update client.go 🎉", State: "open",
					HeadRef: "next-feature", HeadSHA: "0ab96a10266b95b4b533dcfd98738015fbe70889", BaseRef: "master",
					Author: forge.User{ID: 2}, URL: "http://10.40.8.5:3200/test/woodpecker/-/merge_requests/2",
				},
			},
		},
		{
			name: "comment on a merge request",
			hook: "Note Hook",
			body: file("note_merge_request.json"),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventCommentCreated, Raw: "Note Hook",
				Repo: noteRepo, Sender: rootUser, Change: noteChange(),
				Comment: &forge.Comment{ID: 1244, Body: "This MR needs work.", Author: rootUser},
			},
		},
		{
			name: "comment on a merge request edited",
			hook: "Note Hook",
			body: edited("note_merge_request.json", func(m map[string]any) {
				a := obj(m, "object_attributes")
				a["action"], a["note"] = "update", "/kptbot approve"
			}),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventCommentEdited, Raw: "Note Hook",
				Repo: noteRepo, Sender: rootUser, Change: noteChange(),
				Comment: &forge.Comment{ID: 1244, Body: "/kptbot approve", Author: rootUser, Edited: true},
			},
		},
		{
			name: "comment on a draft merge request",
			hook: "Note Hook",
			body: edited("note_merge_request.json", func(m map[string]any) {
				obj(m, "merge_request")["title"] = "[Draft] Tempora et eos debitis quae laborum et."
			}),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventCommentCreated, Raw: "Note Hook",
				Repo: noteRepo, Sender: rootUser, Change: func() *forge.Change { c := noteChange(); c.Draft = true; return c }(),
				Comment: &forge.Comment{ID: 1244, Body: "This MR needs work.", Author: rootUser},
			},
		},
		{
			name: "comment without action (before GitLab sent one) counts as created",
			hook: "Note Hook",
			body: edited("note_merge_request.json", func(m map[string]any) {
				delete(obj(m, "object_attributes"), "action")
			}),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventCommentCreated, Raw: "Note Hook",
				Repo: noteRepo, Sender: rootUser, Change: noteChange(),
				Comment: &forge.Comment{ID: 1244, Body: "This MR needs work.", Author: rootUser},
			},
		},
		{
			name: "system note on a merge request",
			hook: "Note Hook",
			body: edited("note_merge_request.json", func(m map[string]any) { obj(m, "object_attributes")["system"] = true }),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventIgnored, Raw: "Note Hook",
				Repo: noteRepo, Sender: rootUser, Change: noteChange(),
			},
			ignoredHas: "system note",
		},
		{
			name: "comment on an issue",
			hook: "Note Hook",
			body: file("client-go-testdata/note_issue.json"),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventIgnored, Raw: "Note Hook",
				Repo: noteRepo, Sender: forge.User{Login: "user1", ID: 42},
			},
			ignoredHas: "Issue",
		},
		{
			name: "comment on a commit",
			hook: "Note Hook",
			body: file("client-go-testdata/note_commit.json"),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventIgnored, Raw: "Note Hook",
				Repo:   forge.Repo{Forge: forge.GitLab, FullName: "gitlabhq/gitlab-test", ID: 5, CloneURL: "http://example.com/gitlabhq/gitlab-test.git", DefaultBranch: "master"},
				Sender: forge.User{Login: "user1", ID: 42},
			},
			ignoredHas: "Commit",
		},
		{
			name: "comment on a snippet",
			hook: "Note Hook",
			body: file("client-go-testdata/note_snippet.json"),
			want: forge.Event{
				Forge: forge.GitLab, Kind: forge.EventIgnored, Raw: "Note Hook",
				Repo: noteRepo, Sender: forge.User{Login: "user1", ID: 42},
			},
			ignoredHas: "Snippet",
		},
		{
			name:       "comment on a design (a noteable client-go does not know)",
			hook:       "Note Hook",
			body:       edited("client-go-testdata/note_issue.json", func(m map[string]any) { obj(m, "object_attributes")["noteable_type"] = "DesignManagement::Design" }),
			want:       ignoredEvent("Note Hook"),
			ignoredHas: "DesignManagement::Design",
		},
		{
			name:       "internal note on a merge request",
			hook:       "Confidential Note Hook",
			body:       file("note_merge_request.json"),
			want:       ignoredEvent("Confidential Note Hook"),
			ignoredHas: "confidential",
		},
		{name: "pipeline", hook: "Pipeline Hook", body: file("pipeline.json"), want: ignoredEvent("Pipeline Hook"), ignoredHas: "Pipeline Hook"},
		{name: "job", hook: "Job Hook", body: file("job.json"), want: ignoredEvent("Job Hook"), ignoredHas: "Job Hook"},
		{name: "release", hook: "Release Hook", body: file("release.json"), want: ignoredEvent("Release Hook"), ignoredHas: "Release Hook"},
		{name: "emoji on a merge request", hook: "Emoji Hook", body: file("emoji_merge_request.json"), want: ignoredEvent("Emoji Hook"), ignoredHas: "Emoji Hook"},
		{name: "system hook of a push", hook: "System Hook", body: file("push.json"), want: ignoredEvent("System Hook"), ignoredHas: "system hook"},
		{name: "unknown event", hook: "Teleport Hook", body: file("push.json"), want: ignoredEvent("Teleport Hook"), ignoredHas: `unknown GitLab event "Teleport Hook"`},
	}
}

func TestParseWebhook(t *testing.T) {
	t.Parallel()
	for _, tc := range webhookCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseWebhook(newRequest(tc.hook, testSecret, tc.body(t)), []byte(testSecret), testMaxBody)
			if err != nil {
				t.Fatalf("ParseWebhook: %v", err)
			}
			want := tc.want
			want.DeliveryID = "idem-1"
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(forge.Event{}, "Ignored"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("event mismatch (-want +got):\n%s", diff)
			}
			switch {
			case got.Kind == forge.EventIgnored && !strings.Contains(got.Ignored, tc.ignoredHas):
				t.Errorf("Ignored = %q, want it to mention %q", got.Ignored, tc.ignoredHas)
			case got.Kind != forge.EventIgnored && got.Ignored != "":
				t.Errorf("Ignored = %q on a %s event", got.Ignored, got.Kind)
			}
		})
	}
}

// TestParseWebhookClientGoPayloads feeds every payload client-go tests
// with, under the header GitLab sends it with: none may fail, and only the
// kinds kptbot uses may come out as something other than ignored.
func TestParseWebhookClientGoPayloads(t *testing.T) {
	t.Parallel()
	hooks := map[string]string{
		"build":                         "Job Hook",
		"deployment":                    "Deployment Hook",
		"emoji_issue":                   "Emoji Hook",
		"emoji_merge_request":           "Emoji Hook",
		"emoji_note_commit":             "Emoji Hook",
		"emoji_note_issue":              "Emoji Hook",
		"emoji_note_merge_request":      "Emoji Hook",
		"emoji_note_snippet":            "Emoji Hook",
		"emoji_snippet":                 "Emoji Hook",
		"feature_flag":                  "Feature Flag Hook",
		"issue":                         "Issue Hook",
		"job":                           "Job Hook",
		"member":                        "Member Hook",
		"merge_request":                 "Merge Request Hook",
		"milestone_group":               "Milestone Hook",
		"milestone_project":             "Milestone Hook",
		"note_commit":                   "Note Hook",
		"note_issue":                    "Note Hook",
		"note_merge_request":            "Note Hook",
		"note_snippet":                  "Note Hook",
		"pipeline":                      "Pipeline Hook",
		"project":                       "Project Hook",
		"push":                          "Push Hook",
		"release":                       "Release Hook",
		"resource_access_token_group":   "Resource Access Token Hook",
		"resource_access_token_project": "Resource Access Token Hook",
		"service_merge_request":         "Service Hook",
		"subgroup":                      "Subgroup Hook",
		"tag_push":                      "Tag Push Hook",
		"vulnerability":                 "Vulnerability Hook",
		"wiki_page":                     "Wiki Page Hook",
	}
	want := map[string]forge.EventKind{
		"merge_request":      forge.EventChangeOpened,
		"note_merge_request": forge.EventCommentCreated,
		"push":               forge.EventBranchPushed,
		"tag_push":           forge.EventTagPushed,
	}
	files, err := filepath.Glob(filepath.Join(testdataDir, "client-go-testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no client-go payloads: %v", err)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		if name == "group_merge_request" {
			continue // TestParseWebhookErrors: its keys are malformed
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			hook, ok := hooks[name]
			if !ok {
				t.Fatalf("no X-Gitlab-Event known for %s.json: add it to the table", name)
			}
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := ParseWebhook(newRequest(hook, testSecret, body), []byte(testSecret), testMaxBody)
			if err != nil {
				t.Fatalf("ParseWebhook(%s): %v", hook, err)
			}
			wantKind, ok := want[name]
			if !ok {
				wantKind = forge.EventIgnored
			}
			if ev.Kind != wantKind {
				t.Errorf("Kind = %s (%s), want %s", ev.Kind, ev.Ignored, wantKind)
			}
			if ev.Forge != forge.GitLab || ev.Raw != hook || ev.DeliveryID != "idem-1" {
				t.Errorf("Forge, Raw, DeliveryID = %q, %q, %q", ev.Forge, ev.Raw, ev.DeliveryID)
			}
			if ev.Kind == forge.EventIgnored && ev.Ignored == "" {
				t.Error("ignored without a reason")
			}
		})
	}
}

// failingBody fails the test if the body is read at all.
type failingBody struct{ t *testing.T }

func (b failingBody) Read([]byte) (int, error) {
	b.t.Error("body read before the token was verified")
	return 0, io.ErrUnexpectedEOF
}

func (failingBody) Close() error { return nil }

func TestParseWebhookAuth(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		token  string
		secret []byte
	}{
		{"wrong token", "s3cr3t-webhook-tokeN", []byte(testSecret)},
		{"token prefix", testSecret[:5], []byte(testSecret)},
		{"token longer", testSecret + "x", []byte(testSecret)},
		{"missing token", "", []byte(testSecret)},
		{"nil secret", testSecret, nil},
		{"empty secret", testSecret, []byte{}},
		{"empty secret, empty token", "", []byte{}},
		{"secret of only line breaks", testSecret, []byte("\r\n")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRequest("Push Hook", tc.token, nil)
			r.Body = failingBody{t}
			r.ContentLength = -1
			ev, err := ParseWebhook(r, tc.secret, testMaxBody)
			if !errors.Is(err, forge.ErrUnauthorized) {
				t.Fatalf("err = %v, want ErrUnauthorized", err)
			}
			if !cmp.Equal(ev, forge.Event{}) {
				t.Errorf("event %+v returned with an error", ev)
			}
		})
	}

	t.Run("secret file with a trailing newline", func(t *testing.T) {
		t.Parallel()
		// GitLab strips line breaks from the token it sends.
		r := newRequest("Push Hook", testSecret, load(t, "push.json"))
		if _, err := ParseWebhook(r, []byte(testSecret+"\n"), testMaxBody); err != nil {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestParseWebhookTooLarge(t *testing.T) {
	t.Parallel()
	body := load(t, "merge_request.json")
	limit := int64(len(body) - 1)

	t.Run("content length over the limit", func(t *testing.T) {
		t.Parallel()
		_, err := ParseWebhook(newRequest("Merge Request Hook", testSecret, body), []byte(testSecret), limit)
		if !errors.Is(err, forge.ErrTooLarge) {
			t.Fatalf("err = %v, want ErrTooLarge", err)
		}
	})
	t.Run("chunked body over the limit", func(t *testing.T) {
		t.Parallel()
		r := newRequest("Merge Request Hook", testSecret, nil)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), -1
		_, err := ParseWebhook(r, []byte(testSecret), limit)
		if !errors.Is(err, forge.ErrTooLarge) {
			t.Fatalf("err = %v, want ErrTooLarge", err)
		}
	})
	t.Run("lying content length", func(t *testing.T) {
		t.Parallel()
		r := newRequest("Merge Request Hook", testSecret, nil)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), 10
		_, err := ParseWebhook(r, []byte(testSecret), limit)
		if !errors.Is(err, forge.ErrTooLarge) {
			t.Fatalf("err = %v, want ErrTooLarge", err)
		}
	})
	t.Run("server MaxBytesReader", func(t *testing.T) {
		t.Parallel()
		r := newRequest("Merge Request Hook", testSecret, nil)
		r.Body, r.ContentLength = http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(bytes.NewReader(body)), 100), -1
		_, err := ParseWebhook(r, []byte(testSecret), testMaxBody)
		if !errors.Is(err, forge.ErrTooLarge) {
			t.Fatalf("err = %v, want ErrTooLarge", err)
		}
	})
	t.Run("exactly at the limit", func(t *testing.T) {
		t.Parallel()
		ev, err := ParseWebhook(newRequest("Merge Request Hook", testSecret, body), []byte(testSecret), int64(len(body)))
		if err != nil || ev.Kind != forge.EventChangeOpened {
			t.Fatalf("ParseWebhook = %s, %v", ev.Kind, err)
		}
	})
	t.Run("unauthorized wins over too large", func(t *testing.T) {
		t.Parallel()
		_, err := ParseWebhook(newRequest("Merge Request Hook", "nope", body), []byte(testSecret), limit)
		if !errors.Is(err, forge.ErrUnauthorized) {
			t.Fatalf("err = %v, want ErrUnauthorized", err)
		}
	})
}

func TestParseWebhookErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		hook string
		body func(t testing.TB) []byte
	}{
		{"truncated merge request", "Merge Request Hook", func(t testing.TB) []byte { b := load(t, "merge_request.json"); return b[:len(b)/2] }},
		{"truncated push", "Push Hook", func(t testing.TB) []byte { b := load(t, "push.json"); return b[:len(b)/2] }},
		{"truncated note", "Note Hook", func(t testing.TB) []byte { b := load(t, "note_merge_request.json"); return b[:len(b)/2] }},
		{"truncated pipeline", "Pipeline Hook", func(t testing.TB) []byte { b := load(t, "pipeline.json"); return b[:len(b)/2] }},
		{"not JSON, unknown event", "Teleport Hook", func(testing.TB) []byte { return []byte("<xml/>") }},
		{"empty body", "Push Hook", func(testing.TB) []byte { return nil }},
		{"missing X-Gitlab-Event", "", file("push.json")},
		{"push under the merge request header", "Merge Request Hook", file("push.json")},
		{"merge request under the push header", "Push Hook", file("merge_request.json")},
		{"tag push under the push header", "Push Hook", file("tag_push.json")},
		{"push under the note header", "Note Hook", file("push.json")},
		{"empty object push", "Push Hook", func(testing.TB) []byte { return []byte(`{"object_kind":"push"}`) }},
		{"JSON null merge request", "Merge Request Hook", func(testing.TB) []byte { return []byte(`null`) }},
		{"array note", "Note Hook", func(testing.TB) []byte { return []byte(`[]`) }},
		{"iid of the wrong type", "Merge Request Hook", edited("merge_request.json", func(m map[string]any) { obj(m, "object_attributes")["iid"] = "one" })},
		{"note on a merge request with a broken merge_request", "Note Hook", edited("note_merge_request.json", func(m map[string]any) { m["merge_request"] = "7" })},
		{"merge request without iid (client-go's group_merge_request.json has broken keys)", "Merge Request Hook", file("client-go-testdata/group_merge_request.json")},
		{"merge_params of the wrong type", "Merge Request Hook", edited("merge_request.json", func(m map[string]any) {
			obj(m, "object_attributes")["merge_params"] = map[string]any{"force_remove_source_branch": []any{}}
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRequest(tc.hook, testSecret, tc.body(t))
			ev, err := ParseWebhook(r, []byte(testSecret), testMaxBody)
			if !errors.Is(err, forge.ErrBadPayload) {
				t.Fatalf("err = %v (event %s), want ErrBadPayload", err, ev.Kind)
			}
		})
	}
	t.Run("nil request", func(t *testing.T) {
		t.Parallel()
		if _, err := ParseWebhook(nil, []byte(testSecret), testMaxBody); !errors.Is(err, forge.ErrBadPayload) {
			t.Fatalf("err = %v, want ErrBadPayload", err)
		}
	})
}

func TestParseWebhookDeliveryID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		headers map[string]string
		want    string
	}{
		{"idempotency key first", map[string]string{HeaderIdempotencyKey: "idem", HeaderEventUUID: "event", HeaderWebhookUUID: "hook"}, "idem"},
		{"event uuid next", map[string]string{HeaderEventUUID: "event", HeaderWebhookUUID: "hook"}, "event"},
		{"webhook uuid last", map[string]string{HeaderWebhookUUID: "hook"}, "hook"},
		{"none", nil, ""},
	}
	body := load(t, "tag_push.json")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRequest("Tag Push Hook", testSecret, body)
			r.Header.Del(HeaderIdempotencyKey)
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			ev, err := ParseWebhook(r, []byte(testSecret), testMaxBody)
			if err != nil {
				t.Fatal(err)
			}
			if ev.DeliveryID != tc.want {
				t.Errorf("DeliveryID = %q, want %q", ev.DeliveryID, tc.want)
			}
		})
	}
}

func TestHelpers(t *testing.T) {
	t.Parallel()
	for title, want := range map[string]bool{
		"Draft: x": true, "draft:x": true, "[Draft] x": true, "(DRAFT) x": true, "[draft]": true,
		"x": false, "": false, "Drafting x": false, "WIP: x": false, " Draft: x": false, "Draft x": false,
	} {
		if got := IsDraftTitle(title); got != want {
			t.Errorf("IsDraftTitle(%q) = %v, want %v", title, got, want)
		}
	}
	for login, want := range map[string]bool{
		"project_42_bot_0f1e2d3c4b5a6978": true, "group_7_bot_abc123": true,
		"project_42_bot": true, "service_account_group_9_4d2a": true,
		"project_bot": false, "project_42_bot_": false, "project_42_bot_XYZ": false,
		"projectx_1_bot": false, "group_1_bots": false, "user1": false, "": false, "kptbot": false,
	} {
		if got := isBotUsername(login); got != want {
			t.Errorf("isBotUsername(%q) = %v, want %v", login, got, want)
		}
	}
	for sha, want := range map[string]bool{zero: true, strings.Repeat("0", 64): true, "": false, mrHead: false} {
		if got := isZeroSHA(sha); got != want {
			t.Errorf("isZeroSHA(%q) = %v, want %v", sha, got, want)
		}
	}
}

// FuzzParseWebhook checks that no delivery panics and that every failure
// is one of the sentinel errors the server maps to a status code.
func FuzzParseWebhook(f *testing.F) {
	seeds := map[string]string{
		"tag_push.json": "Tag Push Hook", "push.json": "Push Hook", "merge_request.json": "Merge Request Hook",
		"note_merge_request.json": "Note Hook", "pipeline.json": "Pipeline Hook", "job.json": "Job Hook",
		"release.json": "Release Hook", "emoji_merge_request.json": "Emoji Hook",
		"derived/merge_request_update_push.json": "Merge Request Hook", "derived/tag_push_delete.json": "Tag Push Hook",
		"derived/merge_request_approved.json": "Merge Request Hook", "client-go-testdata/note_issue.json": "Note Hook",
		"client-go-testdata/group_merge_request.json": "Merge Request Hook", "client-go-testdata/service_merge_request.json": "Service Hook",
	}
	for name, hook := range seeds {
		f.Add(hook, testSecret, load(f, name))
	}
	f.Add("Note Hook", testSecret, []byte(`{"object_kind":"note","object_attributes":{"noteable_type":"Wiki"}}`))
	f.Add("Merge Request Hook", testSecret, []byte(`{"object_kind":"merge_request","project":{"path_with_namespace":"a/b"},"object_attributes":{"iid":1,"action":"update","oldrev":"x"}}`))
	f.Add("Push Hook", "", []byte(`{}`))
	f.Add("", testSecret, []byte(`null`))
	f.Fuzz(func(t *testing.T, hook, token string, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header[HeaderEvent] = []string{hook}
		r.Header[HeaderToken] = []string{token}
		ev, err := ParseWebhook(r, []byte(testSecret), 4096)
		if token != testSecret {
			if !errors.Is(err, forge.ErrUnauthorized) {
				t.Fatalf("token %q accepted: %v", token, err)
			}
			return
		}
		if err != nil {
			if !errors.Is(err, forge.ErrBadPayload) && !errors.Is(err, forge.ErrTooLarge) {
				t.Fatalf("error %v is no sentinel", err)
			}
			return
		}
		if ev.Forge != forge.GitLab || ev.Kind == "" {
			t.Fatalf("incomplete event %+v", ev)
		}
		if (ev.Kind == forge.EventIgnored) != (ev.Ignored != "") {
			t.Fatalf("Kind %s with Ignored %q", ev.Kind, ev.Ignored)
		}
		if ev.Kind != forge.EventIgnored && ev.Repo.FullName == "" {
			t.Fatalf("%s event without a repository", ev.Kind)
		}
	})
}

// BenchmarkParseWebhook measures a merge request delivery end to end
// (token check, body read, decode, normalize) on all GOMAXPROCS cores.
func BenchmarkParseWebhook(b *testing.B) {
	body := load(b, "merge_request.json")
	secret := []byte(testSecret)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := newRequest("Merge Request Hook", testSecret, body)
		rd := bytes.NewReader(body)
		r.Body = io.NopCloser(rd)
		for pb.Next() {
			rd.Reset(body)
			ev, err := ParseWebhook(r, secret, testMaxBody)
			if err != nil || ev.Kind != forge.EventChangeOpened {
				b.Fatalf("ParseWebhook = %s, %v", ev.Kind, err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}
