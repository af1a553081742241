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
		return ignored(ev, body, "system hooks are not handled: configure a project or group webhook")
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

func ignoredNote(ev forge.Event, noteable string) (forge.Event, error) {
	ev.Kind = forge.EventIgnored
	ev.Ignored = fmt.Sprintf("note on a %s, not on a merge request", noteable)
	return ev, nil
}

// noteParseError tells a note on a noteable client-go does not know (a
// design, a wiki page, a vulnerability, ...), which is ignored, from a
// body that is not a note at all.
func noteParseError(ev forge.Event, body []byte, perr error) (forge.Event, error) {
	var probe struct {
		ObjectKind       string `json:"object_kind"`
		ObjectAttributes struct {
			NoteableType string `json:"noteable_type"`
		} `json:"object_attributes"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return forge.Event{}, badPayload(ev.Raw, err)
	}
	switch probe.ObjectAttributes.NoteableType {
	case "", "Commit", "Issue", "MergeRequest", "Snippet":
		// client-go knows these: the body itself is broken.
		return forge.Event{}, badPayload(ev.Raw, perr)
	}
	if probe.ObjectKind != "note" {
		return forge.Event{}, badPayload(ev.Raw, perr)
	}
	return ignoredNote(ev, probe.ObjectAttributes.NoteableType)
}

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

func mergeRequest(ev forge.Event, e *gl.MergeEvent) (forge.Event, error) {
	if e.ObjectKind != "merge_request" {
		return forge.Event{}, fmt.Errorf("gitlab: %w: %s with object_kind %q", forge.ErrBadPayload, ev.Raw, e.ObjectKind)
	}
	a := &e.ObjectAttributes
	ev.Repo = repo(e.Project.ID, e.Project.PathWithNamespace, e.Project.GitHTTPURL, e.Project.HTTPURL, e.Project.DefaultBranch)
	if ev.Repo.FullName == "" || a.IID <= 0 {
		return forge.Event{}, fmt.Errorf("gitlab: %w: %s without project or iid", forge.ErrBadPayload, ev.Raw)
	}
	ev.Sender = eventUser(e.User)
	labels := e.Labels
	if len(labels) == 0 {
		labels = a.Labels
	}
	ev.Change = &forge.Change{
		Number:         int(a.IID),
		Title:          stripDraft(a.Title), // as GetChange: Draft carries the prefix
		Body:           a.Description,
		Draft:          a.Draft || a.WorkInProgress || IsDraftTitle(a.Title),
		State:          changeState(a.State),
		HeadRef:        a.SourceBranch,
		HeadSHA:        a.LastCommit.ID,
		BaseRef:        a.TargetBranch,
		Author:         forge.User{ID: a.AuthorID},
		Labels:         labelTitles(labels),
		Merged:         a.State == "merged" || a.Action == "merge",
		MergeCommitSHA: a.MergeCommitSHA,
		URL:            a.URL,
		FromFork:       IsFork(a.SourceProjectID, a.TargetProjectID),
	}
	switch a.Action {
	case "open":
		ev.Kind = forge.EventChangeOpened
	case "reopen":
		ev.Kind = forge.EventChangeReopened
	case "close":
		ev.Kind = forge.EventChangeClosed
	case "merge":
		ev.Kind = forge.EventChangeMerged
		ev.Change.State = "merged"
	case "update":
		ev.Kind = updateKind(e)
	case "approved", "approval":
		// "approval" is one approval while more are required, "approved"
		// the one that satisfied the rules (always "approved" on CE).
		ev.Kind = forge.EventApproved
		ev.Review = &forge.Review{State: forge.ReviewApproved, Reviewer: ev.Sender, CommitSHA: a.LastCommit.ID}
	case "unapproved", "unapproval":
		ev.Kind = forge.EventUnapproved
		ev.Review = &forge.Review{State: forge.ReviewDismissed, Reviewer: ev.Sender, CommitSHA: a.LastCommit.ID}
	default:
		ev.Kind = forge.EventIgnored
		ev.Ignored = fmt.Sprintf("merge request action %q is not used by kptbot", a.Action)
	}
	return ev, nil
}

// updateKind classifies an "update" action: new commits first (oldrev is
// set only when the source branch moved), then a draft toggle (the
// changes.draft pair on current GitLab, the title prefix on older ones),
// else an edit (title, description, labels, assignees, ...).
func updateKind(e *gl.MergeEvent) forge.EventKind {
	ch := &e.Changes
	switch {
	case e.ObjectAttributes.OldRev != "":
		return forge.EventChangeSynchronized
	case ch.Draft.Previous != ch.Draft.Current:
		return draftKind(ch.Draft.Current)
	case ch.Title.Previous != ch.Title.Current && IsDraftTitle(ch.Title.Previous) != IsDraftTitle(ch.Title.Current):
		return draftKind(IsDraftTitle(ch.Title.Current))
	default:
		return forge.EventChangeEdited
	}
}

func draftKind(nowDraft bool) forge.EventKind {
	if nowDraft {
		return forge.EventChangeConvertedToDraft
	}
	return forge.EventChangeReadyForReview
}

func mergeRequestNote(ev forge.Event, e *gl.MergeCommentEvent) (forge.Event, error) {
	if e.ObjectKind != "note" {
		return forge.Event{}, fmt.Errorf("gitlab: %w: %s with object_kind %q", forge.ErrBadPayload, ev.Raw, e.ObjectKind)
	}
	id := e.Project.ID
	if id == 0 {
		id = e.ProjectID
	}
	ev.Repo = repo(id, e.Project.PathWithNamespace, e.Project.GitHTTPURL, e.Project.HTTPURL, e.Project.DefaultBranch)
	mr, n := &e.MergeRequest, &e.ObjectAttributes
	if ev.Repo.FullName == "" || mr.IID <= 0 || n.ID <= 0 {
		return forge.Event{}, fmt.Errorf("gitlab: %w: %s without project, merge request iid or note id", forge.ErrBadPayload, ev.Raw)
	}
	ev.Sender = eventUser(e.User)
	if ev.Sender.ID == 0 {
		ev.Sender.ID = n.AuthorID
	}
	ev.Change = &forge.Change{
		Number:         int(mr.IID),
		Title:          stripDraft(mr.Title),
		Body:           mr.Description,
		Draft:          mr.WorkInProgress || IsDraftTitle(mr.Title),
		State:          changeState(mr.State),
		HeadRef:        mr.SourceBranch,
		HeadSHA:        mr.LastCommit.ID,
		BaseRef:        mr.TargetBranch,
		Author:         forge.User{ID: mr.AuthorID},
		Labels:         labelTitles(mr.Labels),
		Merged:         mr.State == "merged",
		MergeCommitSHA: mr.MergeCommitSHA,
		URL:            mr.URL,
		FromFork:       IsFork(mr.SourceProjectID, mr.TargetProjectID),
	}
	if n.System {
		ev.Kind = forge.EventIgnored
		ev.Ignored = "system note"
		return ev, nil
	}
	ev.Comment = &forge.Comment{
		ID:     n.ID,
		Body:   n.Note,
		Author: ev.Sender,
		Edited: n.Action == gl.CommentEventActionUpdate,
	}
	ev.Kind = forge.EventCommentCreated
	if ev.Comment.Edited {
		ev.Kind = forge.EventCommentEdited
	}
	return ev, nil
}

func repo(id int64, fullName, gitHTTPURL, httpURL, defaultBranch string) forge.Repo {
	if gitHTTPURL == "" {
		gitHTTPURL = httpURL
	}
	return forge.Repo{
		Forge:         forge.GitLab,
		FullName:      fullName,
		ID:            id,
		CloneURL:      gitHTTPURL,
		DefaultBranch: defaultBranch,
	}
}

func eventUser(u *gl.EventUser) forge.User {
	if u == nil {
		return forge.User{}
	}
	return user(u.Username, u.ID)
}

func user(login string, id int64) forge.User {
	return forge.User{Login: login, ID: id, Bot: isBotUsername(login)}
}

// isBotUsername recognizes the users GitLab creates for project and group
// access tokens (project_<id>_bot_<hex>, group_<id>_bot_<hex>; older
// instances omit the _<hex>) and for service accounts (service_account_...).
// Webhook payloads carry no bot flag.
func isBotUsername(login string) bool {
	if strings.HasPrefix(login, "service_account_") {
		return true
	}
	var rest string
	switch {
	case strings.HasPrefix(login, "project_"):
		rest = login[len("project_"):]
	case strings.HasPrefix(login, "group_"):
		rest = login[len("group_"):]
	default:
		return false
	}
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits == 0 {
		return false
	}
	rest = rest[digits:]
	if rest == "_bot" {
		return true
	}
	if !strings.HasPrefix(rest, "_bot_") || len(rest) == len("_bot_") {
		return false
	}
	for _, c := range rest[len("_bot_"):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// changeState maps GitLab's merge request states onto forge's open,
// closed and merged. "locked" is the short-lived state while a merge is in
// progress: the change is still open.
func changeState(s string) string {
	switch s {
	case "opened", "locked":
		return "open"
	default:
		return s
	}
}

func labelTitles(ls []*gl.EventLabel) []string {
	if len(ls) == 0 {
		return nil
	}
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		if l != nil && l.Title != "" {
			out = append(out, l.Title)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
