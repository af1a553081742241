package gitlab

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kptbot/kptbot/forge"
)

// TestSystemHooks: GitLab's project system hooks (client-go's samples of
// GitLab's documented payloads) become the event kinds GitHub's
// repository events do; the rest of what system hooks send is ignored.
func TestSystemHooks(t *testing.T) {
	t.Parallel()
	const dir = "client-go-testdata/systemhooks/"
	underscore := forge.Repo{Forge: forge.GitLab, FullName: "jsmith/underscore", ID: 73, Private: true}
	cases := []struct {
		name       string
		body       func(testing.TB) []byte
		want       forge.Event
		ignoredHas string
	}{
		{name: "project created", body: file(dir + "project_create.json"),
			want: forge.Event{Kind: forge.EventInstallationAdded, Repos: []forge.Repo{{Forge: forge.GitLab, FullName: "jsmith/storecloud", ID: 74, Private: true}}}},
		{name: "project destroyed", body: file(dir + "project_destroy.json"),
			want: forge.Event{Kind: forge.EventInstallationRemoved, Repos: []forge.Repo{{Forge: forge.GitLab, FullName: "jsmith/underscore", ID: 73, Private: true}}}},
		{name: "project renamed", body: file(dir + "project_rename.json"),
			want: forge.Event{Kind: forge.EventRepoRenamed, Repo: underscore, From: "jsmith/overscore"}},
		{name: "project transferred", body: file(dir + "project_transfer.json"),
			want: forge.Event{Kind: forge.EventRepoRenamed, Repo: forge.Repo{Forge: forge.GitLab, FullName: "scores/underscore", ID: 73, Private: true}, From: "jsmith/overscore"}},
		{name: "public project created", body: edited(dir+"project_create.json", func(m map[string]any) { m["project_visibility"] = "public" }),
			want: forge.Event{Kind: forge.EventInstallationAdded, Repos: []forge.Repo{{Forge: forge.GitLab, FullName: "jsmith/storecloud", ID: 74}}}},
		{name: "rename without the old path", body: edited(dir+"project_rename.json", func(m map[string]any) { delete(m, "old_path_with_namespace") }),
			want: forge.Event{Kind: forge.EventIgnored}, ignoredHas: "old_path_with_namespace"},
		{name: "project updated", body: file(dir + "project_update.json"), want: forge.Event{Kind: forge.EventIgnored}, ignoredHas: "project_update"},
		{name: "group created", body: file(dir + "group_create.json"), want: forge.Event{Kind: forge.EventIgnored}, ignoredHas: "group_create"},
		{name: "push through a system hook", body: file(dir + "push.json"), want: forge.Event{Kind: forge.EventIgnored}, ignoredHas: "push"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseWebhook(newRequest("System Hook", testSecret, tc.body(t)), []byte(testSecret), testMaxBody)
			if err != nil {
				t.Fatalf("ParseWebhook: %v", err)
			}
			want := tc.want
			want.Forge, want.Raw, want.DeliveryID = forge.GitLab, "System Hook", "idem-1"
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(forge.Event{}, "Ignored"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("event mismatch (-want +got):\n%s", diff)
			}
			if got.Kind == forge.EventIgnored && !strings.Contains(got.Ignored, tc.ignoredHas) {
				t.Errorf("Ignored = %q, want it to mention %q", got.Ignored, tc.ignoredHas)
			}
		})
	}
}

// TestSystemHookTokenAndPayload: a system hook passes the token rule of
// every hook (a forged rename without the secret is refused before its
// body is read), and a project event naming no project is a bad payload.
func TestSystemHookTokenAndPayload(t *testing.T) {
	t.Parallel()
	rename := load(t, "client-go-testdata/systemhooks/project_rename.json")
	for _, token := range []string{"", "wrong"} {
		if _, err := ParseWebhook(newRequest("System Hook", token, rename), []byte(testSecret), testMaxBody); !errors.Is(err, forge.ErrUnauthorized) {
			t.Errorf("token %q: %v, want ErrUnauthorized", token, err)
		}
	}
	noID := mutate(t, rename, func(m map[string]any) { delete(m, "project_id") })
	if _, err := ParseWebhook(newRequest("System Hook", testSecret, noID), []byte(testSecret), testMaxBody); !errors.Is(err, forge.ErrBadPayload) {
		t.Errorf("rename without project_id: %v, want ErrBadPayload", err)
	}
}
