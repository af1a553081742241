package gitlab

import (
	"encoding/json"
	"fmt"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/kptbot/kptbot/forge"
)

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
