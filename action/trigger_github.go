package action

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
)

// DispatchEventType is the repository_dispatch event type (and GitLab
// KPTBOT_EVENT) an upstream sends its downstreams after publishing; the
// examples under examples/ use it on both sides.
const DispatchEventType = "kptbot-upstream-published"

// githubResyncEvent reports whether a workflow trigger carries no change
// to act on, so the run converges the whole repository instead.
func githubResyncEvent(name string) bool {
	switch name {
	case "schedule", "workflow_dispatch", "repository_dispatch", "workflow_run", "workflow_call":
		return true
	}
	return false
}

// githubTrigger turns the workflow's event into a Trigger. The event file
// has the webhook's payload shape but neither a signature (GitHub wrote it
// on the runner, so there is nothing to verify) nor a delivery id, which is
// synthesized from the run so that a re-run is a new delivery.
func githubTrigger(name, delivery string, body []byte, repo forge.Repo) (Trigger, error) {
	t := Trigger{Name: name}
	if githubResyncEvent(name) {
		t.Reason = name
		if name == "repository_dispatch" {
			// The dispatch's event_type arrives as the payload's action.
			var p struct {
				Action string `json:"action"`
			}
			if err := json.Unmarshal(body, &p); err == nil && p.Action != "" {
				t.Reason = fmt.Sprintf("repository_dispatch %q", p.Action)
			}
		}
		t.Reason += ": resync of " + repo.FullName
		return t, nil
	}
	// pull_request_target runs the base branch's workflow for a pull
	// request, with the pull_request payload.
	webhook := name
	if name == "pull_request_target" {
		webhook = "pull_request"
	}
	ev, err := github.Normalize(webhook, delivery, body)
	if err != nil {
		return Trigger{}, fmt.Errorf("reading the %s event (GITHUB_EVENT_PATH): %w", name, err)
	}
	if ev.Repo.FullName != "" && !strings.EqualFold(ev.Repo.FullName, repo.FullName) {
		return Trigger{}, fmt.Errorf("the %s event is for %s but the workflow runs in %s (GITHUB_REPOSITORY): refusing to act on another repository", name, ev.Repo.FullName, repo.FullName)
	}
	fillRepo(&ev.Repo, repo)
	t.Event = &ev
	t.Reason = describeEvent(ev)
	return t, nil
}

// fillRepo completes an event's repository with what the environment
// knows, so Handle and Reconcile see the same repository.
func fillRepo(r *forge.Repo, env forge.Repo) {
	if r.FullName == "" {
		*r = env
		return
	}
	if r.Forge == "" {
		r.Forge = env.Forge
	}
	if r.ID == 0 {
		r.ID = env.ID
	}
	if r.CloneURL == "" {
		r.CloneURL = env.CloneURL
	}
	if r.DefaultBranch == "" {
		r.DefaultBranch = env.DefaultBranch
	}
}

// describeEvent says in a few words what an event is.
func describeEvent(ev forge.Event) string {
	var parts []string
	if ev.Kind != forge.EventIgnored {
		parts = append(parts, string(ev.Kind))
	}
	switch {
	case ev.Change != nil:
		parts = append(parts, fmt.Sprintf("#%d", ev.Change.Number))
	case ev.Ref != "":
		parts = append(parts, ev.Ref)
	}
	if ev.Sender.Login != "" {
		parts = append(parts, "by "+ev.Sender.Login)
	}
	s := ev.Raw
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, " ") + ")"
	}
	if ev.Kind == forge.EventIgnored {
		s += ": ignored: " + ev.Ignored
	}
	return s
}
