// Package gitlab is kptbot's GitLab adapter, built on
// gitlab.com/gitlab-org/api/client-go. This file is the webhook intake: it
// authenticates a delivery by its X-Gitlab-Token, decodes it with
// client-go's own webhook types and normalizes it into a forge.Event.
package gitlab

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/kptbot/kptbot/forge"
)

// Delivery headers GitLab sends with every webhook request.
const (
	// HeaderEvent names the hook ("Push Hook", "Merge Request Hook", ...).
	HeaderEvent = "X-Gitlab-Event"
	// HeaderToken carries the webhook's secret token verbatim.
	HeaderToken = "X-Gitlab-Token"
	// HeaderIdempotencyKey is stable across retries of one delivery
	// (GitLab 17.4 and later).
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderEventUUID is shared by every hook fired for one event and by
	// hooks recursively triggered by it.
	HeaderEventUUID = "X-Gitlab-Event-UUID"
	// HeaderWebhookUUID is a fresh random UUID per request: unique, but it
	// does not survive a retry, so it only identifies, never deduplicates.
	HeaderWebhookUUID = "X-Gitlab-Webhook-UUID"
)

// DefaultMaxBody is the body size limit ParseWebhook uses when it is given
// a non-positive maxBody.
const DefaultMaxBody int64 = 25 << 20

// Hook names (X-Gitlab-Event values) ParseWebhook handles beyond client-go's
// constants.
const (
	eventEmoji  = "Emoji Hook"
	eventSystem = "System Hook"
)

// ParseWebhook authenticates and normalizes one GitLab webhook delivery.
//
// The X-Gitlab-Token header must equal secret (compared in constant time);
// a missing or wrong token, or an empty secret, yields forge.ErrUnauthorized
// before the body is read. Line breaks in secret are ignored, as GitLab
// strips them from the token it sends. A body over maxBody bytes
// (DefaultMaxBody when maxBody <= 0) yields forge.ErrTooLarge, and a body
// that does not decode as its X-Gitlab-Event says yields forge.ErrBadPayload.
// Every other delivery becomes an Event; deliveries kptbot has no use for
// are EventIgnored with Ignored saying why.
func ParseWebhook(r *http.Request, secret []byte, maxBody int64) (forge.Event, error) {
	if r == nil {
		return forge.Event{}, fmt.Errorf("gitlab: %w: no request", forge.ErrBadPayload)
	}
	if err := checkToken(r.Header.Get(HeaderToken), secret); err != nil {
		return forge.Event{}, err
	}
	body, err := readBody(r, maxBody)
	if err != nil {
		return forge.Event{}, err
	}
	return Normalize(r.Header.Get(HeaderEvent), deliveryID(r.Header), body)
}

// Normalize turns one GitLab hook body, already authenticated by the
// caller, into an Event: hook is the X-Gitlab-Event value, delivery the
// deduplication key. ParseWebhook calls it after checking the token; the
// CI trigger and replay call it on bodies vouched for otherwise. A body
// that does not decode as hook says yields forge.ErrBadPayload.
func Normalize(hook, delivery string, body []byte) (forge.Event, error) {
	hook = strings.TrimSpace(hook)
	if hook == "" {
		return forge.Event{}, fmt.Errorf("gitlab: %w: no %s header", forge.ErrBadPayload, HeaderEvent)
	}
	if len(body) == 0 {
		return forge.Event{}, fmt.Errorf("gitlab: %w: empty body", forge.ErrBadPayload)
	}
	ev := forge.Event{
		Forge:      forge.GitLab,
		DeliveryID: delivery,
		Raw:        hook,
	}
	switch gl.EventType(hook) {
	case gl.EventTypePush, gl.EventTypeTagPush, gl.EventTypeMergeRequest, gl.EventTypeNote:
		return decode(ev, body)
	case gl.EventConfidentialNote:
		return ignored(ev, body, "confidential or internal note: kptbot never answers in public what was said in private")
	case eventSystem:
		return systemHook(ev, body)
	case gl.EventTypePipeline, gl.EventTypeJob, gl.EventTypeBuild, gl.EventTypeRelease,
		gl.EventTypeIssue, gl.EventConfidentialIssue, gl.EventTypeWikiPage, gl.EventTypeDeployment,
		gl.EventTypeMember, gl.EventTypeSubGroup, gl.EventTypeFeatureFlag,
		gl.EventTypeResourceAccessToken, gl.EventTypeServiceHook, eventEmoji:
		return ignored(ev, body, fmt.Sprintf("%s is not used by kptbot", hook))
	default:
		return ignored(ev, body, fmt.Sprintf("unknown GitLab event %q", hook))
	}
}

// checkToken compares the delivered token with the configured secret in
// constant time. Both sides are hashed first so that the comparison does
// not even reveal the secret's length.
func checkToken(token string, secret []byte) error {
	if bytes.ContainsAny(secret, "\r\n") {
		// GitLab sends Gitlab::Utils.remove_line_breaks(hook.token).
		secret = bytes.ReplaceAll(bytes.ReplaceAll(secret, []byte("\r\n"), nil), []byte("\n"), nil)
	}
	if len(secret) == 0 {
		return fmt.Errorf("gitlab: %w: no webhook secret is configured", forge.ErrUnauthorized)
	}
	if token == "" {
		return fmt.Errorf("gitlab: %w: no %s header", forge.ErrUnauthorized, HeaderToken)
	}
	got := sha256.Sum256([]byte(token))
	want := sha256.Sum256(secret)
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		return fmt.Errorf("gitlab: %w: %s does not match", forge.ErrUnauthorized, HeaderToken)
	}
	return nil
}

// readBody reads at most maxBody bytes of the request body.
func readBody(r *http.Request, maxBody int64) ([]byte, error) {
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	if r.ContentLength > maxBody {
		return nil, fmt.Errorf("gitlab: %w: %d bytes, limit %d", forge.ErrTooLarge, r.ContentLength, maxBody)
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, fmt.Errorf("gitlab: %w: empty body", forge.ErrBadPayload)
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + 1)
	}
	n, err := buf.ReadFrom(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, fmt.Errorf("gitlab: %w: limit %d", forge.ErrTooLarge, mbe.Limit)
		}
		return nil, fmt.Errorf("gitlab: %w: reading body: %w", forge.ErrBadPayload, err)
	}
	if n > maxBody {
		return nil, fmt.Errorf("gitlab: %w: limit %d", forge.ErrTooLarge, maxBody)
	}
	if n == 0 {
		return nil, fmt.Errorf("gitlab: %w: empty body", forge.ErrBadPayload)
	}
	return buf.Bytes(), nil
}

// deliveryID picks the best deduplication key GitLab sent.
func deliveryID(h http.Header) string {
	for _, k := range []string{HeaderIdempotencyKey, HeaderEventUUID, HeaderWebhookUUID} {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			return v
		}
	}
	return ""
}

// ignored returns ev as EventIgnored, after checking that the body is at
// least JSON (GitLab never sends anything else).
func ignored(ev forge.Event, body []byte, reason string) (forge.Event, error) {
	if !json.Valid(body) {
		return forge.Event{}, fmt.Errorf("gitlab: %w: %s body is not JSON", forge.ErrBadPayload, ev.Raw)
	}
	ev.Kind = forge.EventIgnored
	ev.Ignored = reason
	return ev, nil
}

// decode parses a hook kptbot uses with client-go and normalizes it.
func decode(ev forge.Event, body []byte) (out forge.Event, err error) {
	defer func() {
		// client-go's decoders are plain encoding/json and should never
		// panic; a delivery must not take the server down if one does.
		if p := recover(); p != nil {
			out, err = forge.Event{}, fmt.Errorf("gitlab: %w: %s: decoder panic: %v", forge.ErrBadPayload, ev.Raw, p)
		}
	}()
	parsed, perr := gl.ParseWebhook(gl.EventType(ev.Raw), body)
	if perr != nil {
		if gl.EventType(ev.Raw) == gl.EventTypeNote {
			return noteParseError(ev, body, perr)
		}
		return forge.Event{}, badPayload(ev.Raw, perr)
	}
	switch e := parsed.(type) {
	case *gl.PushEvent:
		return push(ev, e)
	case *gl.TagEvent:
		return tagPush(ev, e)
	case *gl.MergeEvent:
		return mergeRequest(ev, e)
	case *gl.MergeCommentEvent:
		return mergeRequestNote(ev, e)
	// client-go's note types disagree on the user type (*User or
	// *EventUser) and on whether the project object carries its id, so
	// project_id is used for those.
	case *gl.CommitCommentEvent:
		ev.Repo = repo(e.ProjectID, e.Project.PathWithNamespace, e.Project.GitHTTPURL, e.Project.HTTPURL, e.Project.DefaultBranch)
		if e.User != nil {
			ev.Sender = user(e.User.Username, e.User.ID)
		}
		return ignoredNote(ev, "Commit")
	case *gl.IssueCommentEvent:
		ev.Repo = repo(e.ProjectID, e.Project.PathWithNamespace, e.Project.GitHTTPURL, e.Project.HTTPURL, e.Project.DefaultBranch)
		if e.User != nil {
			ev.Sender = user(e.User.Username, e.User.ID)
		}
		return ignoredNote(ev, "Issue")
	case *gl.SnippetCommentEvent:
		ev.Repo = repo(e.ProjectID, e.Project.PathWithNamespace, e.Project.GitHTTPURL, e.Project.HTTPURL, e.Project.DefaultBranch)
		ev.Sender = eventUser(e.User)
		return ignoredNote(ev, "Snippet")
	default:
		return forge.Event{}, fmt.Errorf("gitlab: %w: %s decoded as unexpected %T", forge.ErrBadPayload, ev.Raw, parsed)
	}
}

func badPayload(hook string, err error) error {
	return fmt.Errorf("gitlab: %w: %s: %w", forge.ErrBadPayload, hook, err)
}
