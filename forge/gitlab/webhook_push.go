package gitlab

import (
	"fmt"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/kptbot/kptbot/forge"
)

func push(ev forge.Event, e *gl.PushEvent) (forge.Event, error) {
	if e.ObjectKind != "push" {
		return forge.Event{}, fmt.Errorf("gitlab: %w: %s with object_kind %q", forge.ErrBadPayload, ev.Raw, e.ObjectKind)
	}
	cloneURL, defaultBranch := e.Project.GitHTTPURL, e.Project.DefaultBranch
	if e.Repository != nil && cloneURL == "" {
		cloneURL = e.Repository.GitHTTPURL
	}
	id := e.Project.ID
	if id == 0 {
		id = e.ProjectID
	}
	ev.Repo = repo(id, e.Project.PathWithNamespace, cloneURL, e.Project.HTTPURL, defaultBranch)
	ev.Sender = user(e.UserUsername, e.UserID)
	ev.Ref, ev.Before, ev.After = e.Ref, e.Before, e.After
	if err := checkRef(ev, "refs/heads/"); err != nil {
		return forge.Event{}, err
	}
	ev.Kind = forge.EventBranchPushed
	if isZeroSHA(e.After) {
		ev.Kind = forge.EventBranchDeleted
	}
	return ev, nil
}

func tagPush(ev forge.Event, e *gl.TagEvent) (forge.Event, error) {
	if e.ObjectKind != "tag_push" {
		return forge.Event{}, fmt.Errorf("gitlab: %w: %s with object_kind %q", forge.ErrBadPayload, ev.Raw, e.ObjectKind)
	}
	cloneURL := e.Project.GitHTTPURL
	if e.Repository != nil && cloneURL == "" {
		cloneURL = e.Repository.GitHTTPURL
	}
	id := e.Project.ID
	if id == 0 {
		id = e.ProjectID
	}
	ev.Repo = repo(id, e.Project.PathWithNamespace, cloneURL, e.Project.HTTPURL, e.Project.DefaultBranch)
	ev.Sender = user(e.UserUsername, e.UserID)
	ev.Ref, ev.Before, ev.After = e.Ref, e.Before, e.After
	if err := checkRef(ev, "refs/tags/"); err != nil {
		return forge.Event{}, err
	}
	ev.Kind = forge.EventTagPushed
	if isZeroSHA(e.After) {
		ev.Kind = forge.EventTagDeleted
	}
	return ev, nil
}

// checkRef rejects pushes that name no project, no ref of the right kind,
// or no new object.
func checkRef(ev forge.Event, prefix string) error {
	switch {
	case ev.Repo.FullName == "":
		return fmt.Errorf("gitlab: %w: %s without project.path_with_namespace", forge.ErrBadPayload, ev.Raw)
	case !strings.HasPrefix(ev.Ref, prefix) || len(ev.Ref) == len(prefix):
		return fmt.Errorf("gitlab: %w: %s of ref %q", forge.ErrBadPayload, ev.Raw, ev.Ref)
	case ev.After == "":
		return fmt.Errorf("gitlab: %w: %s without after", forge.ErrBadPayload, ev.Raw)
	}
	return nil
}

// isZeroSHA reports whether sha is git's all-zero name (SHA-1 or SHA-256).
func isZeroSHA(sha string) bool {
	return sha != "" && strings.Trim(sha, "0") == ""
}
