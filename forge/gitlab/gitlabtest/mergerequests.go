package gitlabtest

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The fake's merge requests: diff versions, approvals, merges, notes.

type fMR struct {
	iid                              int64
	title, desc, state, source, base string
	labels                           []string
	author                           *fUser
	created                          time.Time
	sha, mergeSHA                    string
	versions                         []fVersion
	approvals                        map[int64]time.Time
	notes                            []*fNote
	// blocked makes merges fail as GitLab does for conflicts (406).
	blocked bool
}

type fVersion struct {
	id         int64
	head, base string
	at         time.Time
}

type fNote struct {
	id               int64
	body             string
	author           *fUser
	system           bool
	created, updated time.Time
	awards           []fAward
}

type fAward struct {
	id   int64
	name string
	user *fUser
	at   time.Time
}

// fakeDraft is GitLab's draft rule, written out independently of the
// adapter's.
func fakeDraft(title string) bool {
	t := strings.ToLower(title)
	return strings.HasPrefix(t, "draft:") || strings.HasPrefix(t, "[draft]") || strings.HasPrefix(t, "(draft)")
}

// refresh records a new diff version when the source branch moved, as
// GitLab's refresh service does after a push (with an "added 1 commit"
// system note).
func (f *Server) refresh(p *fProject, mr *fMR) {
	if mr.state != "opened" {
		return
	}
	repo := f.git(p)
	head := branchHead(repo, mr.source)
	if head == "" || head == mr.sha {
		return
	}
	at := f.tick()
	mr.versions = append(mr.versions, fVersion{id: f.id(), head: head, base: branchHead(repo, mr.base), at: at})
	if mr.sha != "" {
		mr.notes = append(mr.notes, &fNote{id: f.id(), body: "added 1 commit", author: mr.author, system: true, created: at, updated: at})
	}
	mr.sha = head
}

func (f *Server) mrJSON(p *fProject, mr *fMR) map[string]any {
	f.refresh(p, mr)
	var base string
	if n := len(mr.versions); n > 0 {
		base = mr.versions[n-1].base
	}
	out := map[string]any{
		"id": mr.iid + 5000, "iid": mr.iid, "project_id": p.id, "title": mr.title, "description": mr.desc, "state": mr.state,
		"source_branch": mr.source, "target_branch": mr.base, "source_project_id": p.id, "target_project_id": p.id,
		"sha": mr.sha, "merge_commit_sha": nil, "squash_commit_sha": nil, "draft": fakeDraft(mr.title), "work_in_progress": fakeDraft(mr.title),
		"labels": append([]string{}, mr.labels...), "author": userJSON(mr.author), "created_at": mr.created,
		"web_url":   fmt.Sprintf("https://gitlab.example/%s/-/merge_requests/%d", p.path, mr.iid),
		"diff_refs": map[string]any{"base_sha": base, "head_sha": mr.sha, "start_sha": base}, "detailed_merge_status": "mergeable",
	}
	if mr.state == "merged" {
		out["merge_commit_sha"] = mr.mergeSHA
	}
	return out
}

// mrOf finds the merge request named in the path, or answers 404.
func (f *Server) mrOf(w http.ResponseWriter, r *http.Request, p *fProject) (*fMR, bool) {
	iid, _ := strconv.ParseInt(r.PathValue("iid"), 10, 64)
	mr, ok := p.mrs[iid]
	if !ok {
		message(w, http.StatusNotFound, "404 Not found")
	}
	return mr, ok
}

func (f *Server) mergeRequestRoutes(project func(string, projectHandler)) {
	project("GET /projects/{id}/merge_requests", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		q := r.URL.Query()
		var mrs []*fMR
		for _, mr := range p.mrs {
			f.refresh(p, mr)
			if (q.Get("state") == "all" || q.Get("state") == "" || q.Get("state") == mr.state) && (q.Get("source_branch") == "" || q.Get("source_branch") == mr.source) {
				mrs = append(mrs, mr)
			}
		}
		sort.Slice(mrs, func(i, j int) bool { return mrs[i].iid > mrs[j].iid }) // created_at desc
		var items []any
		for _, mr := range mrs {
			items = append(items, f.mrJSON(p, mr))
		}
		f.page(w, r, items)
	})
	project("POST /projects/{id}/merge_requests", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		in := decodeBody(r)
		repo := f.git(p)
		if branchHead(repo, str(in, "source_branch")) == "" {
			message(w, http.StatusBadRequest, map[string]any{"source_branch": []string{"does not exist"}})
			return
		}
		for _, mr := range p.mrs {
			if mr.state == "opened" && mr.source == str(in, "source_branch") && mr.base == str(in, "target_branch") {
				message(w, http.StatusConflict, []string{fmt.Sprintf("Another open merge request already exists for this source branch: !%d", mr.iid)})
				return
			}
		}
		mr := &fMR{iid: int64(len(p.mrs) + 1), title: str(in, "title"), desc: str(in, "description"), state: "opened",
			source: str(in, "source_branch"), base: str(in, "target_branch"), labels: labels(str(in, "labels")),
			author: f.bot, created: f.tick(), approvals: map[int64]time.Time{}}
		p.mrs[mr.iid] = mr
		writeJSON(w, http.StatusCreated, f.mrJSON(p, mr))
	})
	project("GET /projects/{id}/merge_requests/{iid}", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		if mr, ok := f.mrOf(w, r, p); ok {
			writeJSON(w, http.StatusOK, f.mrJSON(p, mr))
		}
	})
	project("PUT /projects/{id}/merge_requests/{iid}", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		mr, ok := f.mrOf(w, r, p)
		if !ok {
			return
		}
		f.refresh(p, mr)
		in := decodeBody(r)
		if v, ok := in["title"].(string); ok {
			mr.title = v
		}
		if v, ok := in["description"].(string); ok {
			mr.desc = v
		}
		if v, ok := in["labels"].(string); ok {
			mr.labels = labels(v)
		}
		switch str(in, "state_event") {
		case "close":
			mr.state = "closed"
		case "reopen":
			mr.state = "opened"
		}
		writeJSON(w, http.StatusOK, f.mrJSON(p, mr))
	})
}

// mergeRoutes are merging, approvals and diff versions.
func (f *Server) mergeRoutes(project func(string, projectHandler)) {
	project("PUT /projects/{id}/merge_requests/{iid}/merge", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		mr, ok := f.mrOf(w, r, p)
		if !ok {
			return
		}
		f.refresh(p, mr)
		in := decodeBody(r)
		switch {
		case mr.state != "opened" || fakeDraft(mr.title):
			message(w, http.StatusMethodNotAllowed, "405 Method Not Allowed")
		case mr.blocked:
			message(w, http.StatusNotAcceptable, "Branch cannot be merged")
		case str(in, "sha") != "" && str(in, "sha") != mr.sha:
			message(w, http.StatusConflict, "SHA does not match HEAD of source branch: "+mr.sha)
		default:
			sha, err := f.mergeCommit(f.git(p), mr)
			if err != nil {
				message(w, http.StatusInternalServerError, err.Error())
				return
			}
			mr.state, mr.mergeSHA = "merged", sha
			p.merges++
			writeJSON(w, http.StatusOK, f.mrJSON(p, mr))
		}
	})
	project("GET /projects/{id}/merge_requests/{iid}/approvals", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		mr, ok := f.mrOf(w, r, p)
		if !ok {
			return
		}
		f.refresh(p, mr)
		by := []any{}
		ids := make([]int64, 0, len(mr.approvals))
		for id := range mr.approvals {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			a := map[string]any{"user": userJSON(f.userByID(id))}
			if f.approvedAt {
				a["approved_at"] = mr.approvals[id]
			}
			by = append(by, a)
		}
		left := max(f.approvalsRequired-len(ids), 0)
		writeJSON(w, http.StatusOK, map[string]any{"id": mr.iid + 5000, "iid": mr.iid, "project_id": p.id, "title": mr.title, "state": mr.state,
			"merge_status": "can_be_merged", "approved": left == 0, "approvals_required": f.approvalsRequired, "approvals_left": left,
			"approved_by": by, "user_has_approved": false, "user_can_approve": true})
	})
	project("GET /projects/{id}/merge_requests/{iid}/versions", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		mr, ok := f.mrOf(w, r, p)
		if !ok {
			return
		}
		f.refresh(p, mr)
		var items []any
		for i := len(mr.versions) - 1; i >= 0; i-- { // newest first, as GitLab lists them
			v := mr.versions[i]
			items = append(items, map[string]any{"id": v.id, "head_commit_sha": v.head, "base_commit_sha": v.base, "start_commit_sha": v.base,
				"created_at": v.at, "merge_request_id": mr.iid + 5000, "state": "collected", "real_size": "1"})
		}
		f.page(w, r, items)
	})
}

// mergeCommit records the head's tree on the target branch as a merge
// commit.
func (f *Server) mergeCommit(repo *git.Repository, mr *fMR) (string, error) {
	base, err := repo.Reference(plumbing.NewBranchReferenceName(mr.base), true)
	if err != nil {
		return "", err
	}
	hc, err := repo.CommitObject(plumbing.NewHash(mr.sha))
	if err != nil {
		return "", err
	}
	sig := object.Signature{Name: "GitLab", Email: "noreply@gitlab.example", When: f.tick()}
	c := &object.Commit{Author: sig, Committer: sig, Message: fmt.Sprintf("Merge branch '%s' into '%s'\n\nSee merge request !%d", mr.source, mr.base, mr.iid),
		TreeHash: hc.TreeHash, ParentHashes: []plumbing.Hash{base.Hash(), hc.Hash}}
	o := repo.Storer.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return "", err
	}
	h, err := repo.Storer.SetEncodedObject(o)
	if err != nil {
		return "", err
	}
	return h.String(), repo.Storer.SetReference(plumbing.NewHashReference(base.Name(), h))
}

func noteJSON(n *fNote) map[string]any {
	return map[string]any{"id": n.id, "type": nil, "body": n.body, "author": userJSON(n.author), "system": n.system,
		"created_at": n.created, "updated_at": n.updated, "noteable_type": "MergeRequest", "resolvable": false, "internal": false}
}

// gitlabEmoji are the award emoji names the fake knows.
var gitlabEmoji = map[string]bool{"thumbsup": true, "thumbsdown": true, "laughing": true, "confused": true, "heart": true, "tada": true, "rocket": true, "eyes": true}

func (f *Server) noteRoutes(project func(string, projectHandler)) {
	note := func(w http.ResponseWriter, r *http.Request, p *fProject) (*fMR, *fNote, bool) {
		iid, _ := strconv.ParseInt(r.PathValue("iid"), 10, 64)
		mr, ok := p.mrs[iid]
		if !ok {
			message(w, http.StatusNotFound, "404 Not found")
			return nil, nil, false
		}
		id, _ := strconv.ParseInt(r.PathValue("note"), 10, 64)
		for _, n := range mr.notes {
			if n.id == id {
				return mr, n, true
			}
		}
		message(w, http.StatusNotFound, "404 Note Not Found")
		return nil, nil, false
	}
	project("GET /projects/{id}/merge_requests/{iid}/notes", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		iid, _ := strconv.ParseInt(r.PathValue("iid"), 10, 64)
		mr, ok := p.mrs[iid]
		if !ok {
			message(w, http.StatusNotFound, "404 Not found")
			return
		}
		f.refresh(p, mr)
		ns := append([]*fNote(nil), mr.notes...)
		if r.URL.Query().Get("sort") != "asc" {
			sort.SliceStable(ns, func(i, j int) bool { return ns[i].created.After(ns[j].created) })
		}
		var items []any
		for _, n := range ns {
			items = append(items, noteJSON(n))
		}
		f.page(w, r, items)
	})
	project("POST /projects/{id}/merge_requests/{iid}/notes", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		iid, _ := strconv.ParseInt(r.PathValue("iid"), 10, 64)
		mr, ok := p.mrs[iid]
		if !ok {
			message(w, http.StatusNotFound, "404 Not found")
			return
		}
		at := f.tick()
		n := &fNote{id: f.id(), body: str(decodeBody(r), "body"), author: f.bot, created: at, updated: at}
		mr.notes = append(mr.notes, n)
		writeJSON(w, http.StatusCreated, noteJSON(n))
	})
	project("GET /projects/{id}/merge_requests/{iid}/notes/{note}", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		if _, n, ok := note(w, r, p); ok {
			writeJSON(w, http.StatusOK, noteJSON(n))
		}
	})
	project("PUT /projects/{id}/merge_requests/{iid}/notes/{note}", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		if _, n, ok := note(w, r, p); ok {
			n.body, n.updated = str(decodeBody(r), "body"), f.tick()
			writeJSON(w, http.StatusOK, noteJSON(n))
		}
	})
	project("POST /projects/{id}/merge_requests/{iid}/notes/{note}/award_emoji", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		_, n, ok := note(w, r, p)
		if !ok {
			return
		}
		name := str(decodeBody(r), "name")
		if !gitlabEmoji[name] {
			message(w, http.StatusNotFound, "404 Award Emoji Name is not a valid emoji name Not Found")
			return
		}
		for _, a := range n.awards {
			if a.name == name && a.user == f.bot {
				message(w, http.StatusNotFound, "404 Award Emoji Name has already been taken Not Found")
				return
			}
		}
		a := fAward{id: f.id(), name: name, user: f.bot, at: f.tick()}
		n.awards = append(n.awards, a)
		writeJSON(w, http.StatusCreated, map[string]any{"id": a.id, "name": a.name, "user": userJSON(a.user), "awardable_id": n.id, "awardable_type": "Note"})
	})
	project("GET /projects/{id}/merge_requests/{iid}/notes/{note}/award_emoji", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		_, n, ok := note(w, r, p)
		if !ok {
			return
		}
		var items []any
		for _, a := range n.awards {
			items = append(items, map[string]any{"id": a.id, "name": a.name, "user": userJSON(a.user), "awardable_id": n.id, "awardable_type": "Note"})
		}
		f.page(w, r, items)
	})
}

func (f *Server) issueRoutes(project func(string, projectHandler)) {
	issueJSON := func(p *fProject, i *fIssue) map[string]any {
		return map[string]any{"id": i.iid + 9000, "iid": i.iid, "project_id": p.id, "title": i.title, "description": i.desc, "state": i.state,
			"labels": append([]string{}, i.labels...), "web_url": fmt.Sprintf("https://gitlab.example/%s/-/issues/%d", p.path, i.iid)}
	}
	project("GET /projects/{id}/issues", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		q := r.URL.Query()
		var items []any
		for iid := int64(1); iid <= int64(len(p.issues)); iid++ {
			i := p.issues[iid]
			if q.Get("state") != "" && q.Get("state") != "all" && q.Get("state") != i.state {
				continue
			}
			if want := labels(q.Get("labels")); len(want) > 0 && !hasAll(i.labels, want) {
				continue
			}
			items = append(items, issueJSON(p, i))
		}
		f.page(w, r, items)
	})
	project("POST /projects/{id}/issues", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		in := decodeBody(r)
		if str(in, "title") == "" {
			message(w, http.StatusBadRequest, map[string]any{"title": []string{"can't be blank"}})
			return
		}
		i := &fIssue{iid: int64(len(p.issues) + 1), title: str(in, "title"), desc: str(in, "description"), state: "opened", labels: labels(str(in, "labels"))}
		p.issues[i.iid] = i
		writeJSON(w, http.StatusCreated, issueJSON(p, i))
	})
	project("PUT /projects/{id}/issues/{iid}", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		iid, _ := strconv.ParseInt(r.PathValue("iid"), 10, 64)
		i, ok := p.issues[iid]
		if !ok {
			message(w, http.StatusNotFound, "404 Issue Not Found")
			return
		}
		in := decodeBody(r)
		if v, ok := in["title"].(string); ok {
			i.title = v
		}
		if v, ok := in["description"].(string); ok {
			i.desc = v
		}
		writeJSON(w, http.StatusOK, issueJSON(p, i))
	})
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}
