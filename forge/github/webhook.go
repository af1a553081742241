// Package github is kptbot's GitHub adapter. This file turns webhook
// deliveries into forge.Events: the body is read with a size limit, the
// X-Hub-Signature-256 HMAC is verified in constant time before anything is
// parsed, the hot events are decoded into slim shapes (slim.go) and the
// rest with go-github's own event types.
package github

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v60/github"
	"github.com/kptbot/kptbot/forge"
)

// DefaultMaxBody is GitHub's own cap on webhook payloads (25 MB).
const DefaultMaxBody = 25 << 20

// ParseWebhook verifies and normalizes one GitHub webhook delivery. secret
// is the webhook secret; an empty secret rejects everything. Errors wrap
// forge.ErrUnauthorized (401), forge.ErrTooLarge (413) or
// forge.ErrBadPayload (400); deliveries kptbot has no use for come back as
// forge.EventIgnored with the reason.
func ParseWebhook(r *http.Request, secret []byte, maxBody int64) (forge.Event, error) {
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return forge.Event{}, fmt.Errorf("%w: reading the body: %v", forge.ErrBadPayload, err)
	}
	if int64(len(body)) > maxBody {
		return forge.Event{}, fmt.Errorf("%w: more than %d bytes", forge.ErrTooLarge, maxBody)
	}
	if err := VerifySignature(secret, body, r.Header.Get("X-Hub-Signature-256")); err != nil {
		return forge.Event{}, err
	}
	return Normalize(r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery"), body)
}

// VerifySignature checks an X-Hub-Signature-256 header ("sha256=<hex>")
// against the HMAC of body, in constant time.
func VerifySignature(secret, body []byte, header string) error {
	if len(secret) == 0 {
		return fmt.Errorf("%w: no webhook secret is configured, so no delivery can be trusted", forge.ErrUnauthorized)
	}
	sig, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return fmt.Errorf("%w: missing X-Hub-Signature-256", forge.ErrUnauthorized)
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return fmt.Errorf("%w: X-Hub-Signature-256 is not hex", forge.ErrUnauthorized)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return fmt.Errorf("%w: X-Hub-Signature-256 does not match", forge.ErrUnauthorized)
	}
	return nil
}

// Normalize turns a verified delivery into a forge.Event.
func Normalize(eventType, delivery string, body []byte) (forge.Event, error) {
	ev := forge.Event{Forge: forge.GitHub, Raw: eventType, DeliveryID: delivery}
	ignore := func(format string, args ...any) (forge.Event, error) {
		ev.Kind, ev.Ignored = forge.EventIgnored, fmt.Sprintf(format, args...)
		return ev, nil
	}
	if eventType == "" {
		return forge.Event{}, fmt.Errorf("%w: missing X-GitHub-Event", forge.ErrBadPayload)
	}
	if hotEvents[eventType] {
		return normalizeHot(ev, body)
	}
	parsed, err := gh.ParseWebHook(eventType, body)
	if err != nil {
		if strings.Contains(err.Error(), "unknown X-Github-Event") {
			return ignore("event %q is not one kptbot acts on", eventType)
		}
		// go-github rejects some real payloads (check_run rerequested
		// carries a non-RFC 3339 timestamp); read what kptbot needs
		// directly before giving up.
		if e, ok := fallback(ev, eventType, body); ok {
			return e, nil
		}
		return forge.Event{}, fmt.Errorf("%w: %s event: %v", forge.ErrBadPayload, eventType, err)
	}
	switch e := parsed.(type) {
	case *gh.PingEvent:
		ev.Kind = forge.EventPing
		if e.Installation != nil {
			ev.InstallationID = e.Installation.GetID()
		}
		return ev, nil
	case *gh.InstallationEvent:
		ev.Sender, ev.InstallationID = user(e.GetSender()), e.GetInstallation().GetID()
		for _, r := range e.Repositories {
			ev.Repos = append(ev.Repos, repo(r))
		}
		switch e.GetAction() {
		case "created", "unsuspend":
			ev.Kind = forge.EventInstallationAdded
		case "deleted", "suspend":
			ev.Kind = forge.EventInstallationRemoved
		default:
			return ignore("installation action %q", e.GetAction())
		}
		return ev, nil
	case *gh.InstallationRepositoriesEvent:
		ev.Sender, ev.InstallationID = user(e.GetSender()), e.GetInstallation().GetID()
		switch e.GetAction() {
		case "added":
			ev.Kind = forge.EventInstallationAdded
			for _, r := range e.RepositoriesAdded {
				ev.Repos = append(ev.Repos, repo(r))
			}
		case "removed":
			ev.Kind = forge.EventInstallationRemoved
			for _, r := range e.RepositoriesRemoved {
				ev.Repos = append(ev.Repos, repo(r))
			}
		default:
			return ignore("installation_repositories action %q", e.GetAction())
		}
		return ev, nil
	case *gh.RepositoryEvent:
		return repositoryEvent(ev, e)
	case *gh.CheckRunEvent:
		ev.Repo, ev.Sender, ev.InstallationID = repo(e.GetRepo()), user(e.GetSender()), e.GetInstallation().GetID()
		if e.GetAction() != "rerequested" {
			return ignore("check_run action %q", e.GetAction())
		}
		ev.Kind, ev.After = forge.EventCheckRerequested, e.GetCheckRun().GetHeadSHA()
		return ev, nil
	case *gh.CheckSuiteEvent:
		ev.Repo, ev.Sender, ev.InstallationID = repo(e.GetRepo()), user(e.GetSender()), e.GetInstallation().GetID()
		if e.GetAction() != "rerequested" {
			return ignore("check_suite action %q", e.GetAction())
		}
		ev.Kind, ev.After = forge.EventCheckRerequested, e.GetCheckSuite().GetHeadSHA()
		return ev, nil
	case *gh.CreateEvent, *gh.DeleteEvent:
		return ignore("%s: the push event for the same ref is the one kptbot acts on", eventType)
	}
	return ignore("event %q is not one kptbot acts on", eventType)
}

// repositoryEvent keeps the follower index in step with the repositories
// the bot can see: one created is like one added to the installation, one
// deleted like one removed, and a rename or a transfer carries the old
// name.
func repositoryEvent(ev forge.Event, e *gh.RepositoryEvent) (forge.Event, error) {
	r := repo(e.GetRepo())
	ev.Sender, ev.InstallationID = user(e.GetSender()), e.GetInstallation().GetID()
	switch e.GetAction() {
	case "created":
		ev.Kind, ev.Repos = forge.EventInstallationAdded, []forge.Repo{r}
	case "deleted":
		ev.Kind, ev.Repos = forge.EventInstallationRemoved, []forge.Repo{r}
	case "renamed", "transferred":
		owner, name, _ := strings.Cut(r.FullName, "/")
		if from := e.GetChanges().GetRepo().GetName().GetFrom(); from != "" {
			name = from
		}
		if o := e.GetChanges().GetOwner().GetOwnerInfo(); o != nil {
			if l := o.GetUser().GetLogin() + o.GetOrg().GetLogin(); l != "" {
				owner = l
			}
		}
		if owner+"/"+name == r.FullName || name == "" {
			ev.Kind, ev.Ignored = forge.EventIgnored, "repository "+e.GetAction()+" without its old name"
			return ev, nil
		}
		ev.Kind, ev.Repo, ev.From = forge.EventRepoRenamed, r, owner+"/"+name
	default:
		ev.Kind, ev.Ignored = forge.EventIgnored, fmt.Sprintf("repository action %q", e.GetAction())
	}
	return ev, nil
}

// fallback reads the few fields kptbot needs from payloads go-github cannot
// decode, for the events where that is known to happen.
func fallback(ev forge.Event, eventType string, body []byte) (forge.Event, bool) {
	if eventType != "check_run" && eventType != "check_suite" {
		return ev, false
	}
	var p struct {
		Action     string `json:"action"`
		Repository struct {
			ID            int64  `json:"id"`
			FullName      string `json:"full_name"`
			CloneURL      string `json:"clone_url"`
			DefaultBranch string `json:"default_branch"`
		} `json:"repository"`
		Sender struct {
			Login string `json:"login"`
			ID    int64  `json:"id"`
		} `json:"sender"`
		Installation struct {
			ID int64 `json:"id"`
		} `json:"installation"`
		CheckRun struct {
			HeadSHA string `json:"head_sha"`
		} `json:"check_run"`
		CheckSuite struct {
			HeadSHA string `json:"head_sha"`
		} `json:"check_suite"`
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Repository.FullName == "" {
		return ev, false
	}
	ev.Repo = forge.Repo{Forge: forge.GitHub, ID: p.Repository.ID, FullName: p.Repository.FullName, CloneURL: p.Repository.CloneURL, DefaultBranch: p.Repository.DefaultBranch}
	ev.Sender = forge.User{Login: p.Sender.Login, ID: p.Sender.ID}
	ev.InstallationID = p.Installation.ID
	if p.Action != "rerequested" {
		ev.Kind, ev.Ignored = forge.EventIgnored, fmt.Sprintf("%s action %q", eventType, p.Action)
		return ev, true
	}
	ev.Kind, ev.After = forge.EventCheckRerequested, p.CheckRun.HeadSHA+p.CheckSuite.HeadSHA
	return ev, true
}

func user(u *gh.User) forge.User {
	if u == nil {
		return forge.User{}
	}
	return forge.User{Login: u.GetLogin(), ID: u.GetID(), Bot: u.GetType() == "Bot"}
}

func repo(r *gh.Repository) forge.Repo {
	if r == nil {
		return forge.Repo{Forge: forge.GitHub}
	}
	return forge.Repo{Forge: forge.GitHub, FullName: r.GetFullName(), ID: r.GetID(), CloneURL: r.GetCloneURL(),
		DefaultBranch: r.GetDefaultBranch(), Topics: r.Topics, Private: r.GetPrivate()}
}
