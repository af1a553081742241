package gitlab

import (
	"encoding/json"
	"fmt"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/kptbot/kptbot/forge"
)

// systemHook normalizes a system hook delivery. GitLab tells of a project
// created, deleted, renamed or transferred only through system hooks (an
// instance administrator's); kptbot needs those to keep its follower index
// in step, as GitHub's repository events do. They come through
// ParseWebhook like every other hook, so the token rule is the same: a
// delivery without the webhook secret never gets here. Everything else a
// system hook sends (users, groups, keys, and the pushes and merge
// requests kptbot takes from project or group webhooks) is ignored.
func systemHook(ev forge.Event, body []byte) (forge.Event, error) {
	var probe struct {
		EventName  string `json:"event_name"`
		ObjectKind string `json:"object_kind"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return forge.Event{}, badPayload(ev.Raw, err)
	}
	switch probe.EventName {
	case "project_create", "project_destroy", "project_rename", "project_transfer":
	case "":
		ev.Kind, ev.Ignored = forge.EventIgnored, fmt.Sprintf("system hook %q: kptbot takes pushes and merge requests from project or group webhooks", probe.ObjectKind)
		return ev, nil
	default:
		ev.Kind, ev.Ignored = forge.EventIgnored, fmt.Sprintf("system hook event %q is not used by kptbot", probe.EventName)
		return ev, nil
	}
	var p gl.ProjectSystemEvent
	if err := json.Unmarshal(body, &p); err != nil {
		return forge.Event{}, badPayload(ev.Raw, err)
	}
	return projectEvent(ev, &p)
}

// projectEvent maps a project's system hook onto the event kinds GitHub's
// repository events become: created is a repository the bot can now see,
// destroyed one it no longer can, renamed and transferred carry the old
// path (the project id stays).
func projectEvent(ev forge.Event, p *gl.ProjectSystemEvent) (forge.Event, error) {
	if p.PathWithNamespace == "" || p.ProjectID <= 0 {
		return forge.Event{}, fmt.Errorf("gitlab: %w: %s %s without path_with_namespace or project_id", forge.ErrBadPayload, ev.Raw, p.EventName)
	}
	r := forge.Repo{Forge: forge.GitLab, FullName: p.PathWithNamespace, ID: p.ProjectID, Private: p.ProjectVisibility != string(gl.PublicVisibility)}
	switch p.EventName {
	case "project_create":
		ev.Kind, ev.Repos = forge.EventInstallationAdded, []forge.Repo{r}
	case "project_destroy":
		ev.Kind, ev.Repos = forge.EventInstallationRemoved, []forge.Repo{r}
	default: // project_rename, project_transfer
		if p.OldPathWithNamespace == "" || p.OldPathWithNamespace == p.PathWithNamespace {
			ev.Kind, ev.Ignored = forge.EventIgnored, p.EventName+" without a different old_path_with_namespace"
			return ev, nil
		}
		ev.Kind, ev.Repo, ev.From = forge.EventRepoRenamed, r, p.OldPathWithNamespace
	}
	return ev, nil
}
