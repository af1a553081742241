package gitlabtest

import (
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

// The fake's test-only powers: what people do in GitLab's web UI
// (approve, comment, join groups) and what tests inspect afterwards.
// Repositories are named by forge.Repo.FullName, the project's full path.

// Access levels GitLab grants on projects and groups.
const (
	Guest      = 10
	Reporter   = 20
	Developer  = 30
	Maintainer = 40
	Owner      = 50
)

// CommitStatus is the latest commit status the fake received for one
// sha and name.
type CommitStatus struct {
	State, Description, TargetURL string
}

// Pipeline is a pipeline the fake was asked to create.
type Pipeline struct {
	Ref, Source string // Source: "api" (create pipeline) or "trigger"
	Variables   map[string]any
}

// Note is a merge request note as the fake holds it.
type Note struct {
	ID     int64
	Body   string
	Author string
	System bool
	// Awards are the award emoji names on the note, in order given.
	Awards []string
}

// MergeRequest is a snapshot of one merge request.
type MergeRequest struct {
	IID                       int
	Title, Description, State string
	Source, Target, Author    string
	SHA, MergeCommitSHA       string
	Labels                    []string
	Notes                     []Note
}

// Seed creates project r (subgroups allowed) whose branch holds files,
// with the bot user as a Maintainer, and returns the commit.
func (f *Server) Seed(r forge.Repo, branch string, files map[string][]byte) string {
	path := r.FullName
	bare := f.bare(path)
	if err := os.MkdirAll(filepath.Dir(bare), 0o755); err != nil {
		f.t.Fatal(err)
	}
	gitfixture.Git(f.t, filepath.Dir(bare), "init", "-q", "--bare", "-b", branch, bare)
	gitfixture.Git(f.t, bare, "config", "http.receivepack", "true")
	wt := gitfixture.WorkTree(f.t, bare)
	gitfixture.Git(f.t, wt, "symbolic-ref", "HEAD", "refs/heads/"+branch)
	s := map[string]string{}
	for n, b := range files {
		s[n] = string(b)
	}
	gitfixture.WriteFiles(f.t, wt, s)
	sha := gitfixture.CommitAndTag(f.t, wt, "seed", "")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.projects[path] = &fProject{id: f.id() + 1000, path: path, members: map[int64]int{f.bot.id: Maintainer}, mrs: map[int64]*fMR{},
		issues: map[int64]*fIssue{}, statuses: map[string]CommitStatus{}, triggers: map[string]bool{}, visibility: "private"}
	return sha
}

// Rename moves project r to path to, as renaming it or transferring it
// to another namespace does on GitLab: its id, merge requests and history
// stay; the old path names nothing until a project is created there.
func (f *Server) Rename(r forge.Repo, to string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.project(r)
	if _, taken := f.projects[to]; taken {
		f.t.Fatalf("fake GitLab: %q is taken", to)
	}
	if err := os.MkdirAll(filepath.Dir(f.bare(to)), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(f.bare(p.path), f.bare(to)); err != nil {
		f.t.Fatal(err)
	}
	delete(f.projects, p.path)
	p.path = to
	f.projects[to] = p
}

// SetPrivate makes project r private, or public, as forgetest.Contract
// sets visibility on every forge.
func (f *Server) SetPrivate(r forge.Repo, private bool) {
	v := "public"
	if private {
		v = "private"
	}
	f.SetVisibility(r, v)
}

// RequirePipelines turns on r's "Pipelines must succeed", as its project
// then shows it.
func (f *Server) RequirePipelines(r forge.Repo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.project(r).pipelineRequired = true
}

// SetVisibility sets project r's visibility: private (the default),
// internal or public.
func (f *Server) SetVisibility(r forge.Repo, visibility string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.project(r).visibility = visibility
}

// project returns a seeded project or fails the test.
func (f *Server) project(r forge.Repo) *fProject {
	p, ok := f.projects[r.FullName]
	if !ok {
		f.t.Fatalf("fake GitLab: no project %q (Seed it first)", r.FullName)
	}
	return p
}

// mr returns a merge request of a seeded project or fails the test.
func (f *Server) mr(r forge.Repo, iid int) (*fProject, *fMR) {
	p := f.project(r)
	mr, ok := p.mrs[int64(iid)]
	if !ok {
		f.t.Fatalf("fake GitLab: no merge request %s!%d", r.FullName, iid)
	}
	return p, mr
}

// ProjectID is project r's numeric ID, as payloads carry it.
func (f *Server) ProjectID(r forge.Repo) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.project(r).id
}

// CloneURL is project r's http_url_to_repo.
func (f *Server) CloneURL(r forge.Repo) string { return f.GitURL + r.FullName + ".git" }

// UserID is login's user ID, creating the user when there is none.
func (f *Server) UserID(login string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.user(login).id
}

// AddGroupMember makes login a member of group (a full path) at level;
// members of a group are members of its subgroups and projects.
func (f *Server) AddGroupMember(group, login string, level int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.groups[group] == nil {
		f.groups[group] = map[int64]int{}
	}
	f.groups[group][f.user(login).id] = level
}

// SetAccess makes login a direct member of project r at level (Reporter,
// Developer, ...); level 0 removes the direct membership.
func (f *Server) SetAccess(r forge.Repo, login string, level int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, u := f.project(r), f.user(login)
	if level == 0 {
		delete(p.members, u.id)
		return
	}
	p.members[u.id] = level
}

// SetPaging caps per_page at maxPerPage (GitLab: 100) so small data spans
// pages, and with link false leaves out the Link header, as some GitLab
// versions and proxies do (pagination by X-Next-Page only).
func (f *Server) SetPaging(maxPerPage int, link bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.maxPerPage, f.noLink = maxPerPage, !link
}

// SetApprovedAt makes the approvals API send approved_at (GitLab 16+);
// without it only the "approved this merge request" notes date approvals.
func (f *Server) SetApprovedAt(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.approvedAt = on
}

// SetApprovalsRequired sets what approvals_left counts down from (0, the
// default, is the Free tier: "approved" with nobody having approved).
func (f *Server) SetApprovalsRequired(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.approvalsRequired = n
}

// Intercept lets h answer any API request first (it returns true when it
// did); h runs under the fake's lock, after the request is recorded.
func (f *Server) Intercept(h func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.intercept = h
}

// Requests lists the API requests so far as "METHOD /escaped/path", the
// path relative to URL.
func (f *Server) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// Approve records login's approval of merge request iid's current head,
// as the Approve button does: login joins approved_by with approved_at
// now, and an "approved this merge request" system note by login is
// added at the same time.
func (f *Server) Approve(r forge.Repo, iid int, login string) { f.ApproveAt(r, iid, login, "") }

// ApproveAt is Approve through the API's sha parameter: sha, when given,
// must be the merge request's head, and the test fails otherwise.
func (f *Server) ApproveAt(r forge.Repo, iid int, login, sha string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, mr := f.mr(r, iid)
	f.refresh(p, mr)
	if sha != "" && sha != mr.sha {
		f.t.Fatalf("fake GitLab: approving %s!%d at %s, but its head is %s", r.FullName, iid, sha, mr.sha)
	}
	u := f.user(login)
	at := f.tick()
	mr.approvals[u.id] = at
	mr.notes = append(mr.notes, &fNote{id: f.id(), body: "approved this merge request", author: u, system: true, created: at, updated: at})
}

// Unapprove revokes login's approval, with GitLab's system note.
func (f *Server) Unapprove(r forge.Repo, iid int, login string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, mr := f.mr(r, iid)
	u := f.user(login)
	delete(mr.approvals, u.id)
	at := f.tick()
	mr.notes = append(mr.notes, &fNote{id: f.id(), body: "unapproved this merge request", author: u, system: true, created: at, updated: at})
}

// AddNote adds a comment by login to merge request iid, as a person
// would, and returns the note's ID (the object_attributes.id of its
// webhook).
func (f *Server) AddNote(r forge.Repo, iid int, login, body string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, mr := f.mr(r, iid)
	at := f.tick()
	n := &fNote{id: f.id(), body: body, author: f.user(login), created: at, updated: at}
	mr.notes = append(mr.notes, n)
	return n.id
}

// SetAuthor makes login the author of merge request iid (one opened
// through the API is the bot's).
func (f *Server) SetAuthor(r forge.Repo, iid int, login string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, mr := f.mr(r, iid)
	mr.author = f.user(login)
}

// SetMergeBlocked makes merging iid fail as GitLab does for conflicts
// (406 "Branch cannot be merged"), or lifts that.
func (f *Server) SetMergeBlocked(r forge.Repo, iid int, blocked bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, mr := f.mr(r, iid)
	mr.blocked = blocked
}

// MergeRequest returns a snapshot of merge request iid, its title as
// stored (with any Draft: prefix) and every note, system notes included.
func (f *Server) MergeRequest(r forge.Repo, iid int) MergeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, mr := f.mr(r, iid)
	f.refresh(p, mr)
	out := MergeRequest{IID: int(mr.iid), Title: mr.title, Description: mr.desc, State: mr.state, Source: mr.source, Target: mr.base,
		Author: mr.author.username, SHA: mr.sha, MergeCommitSHA: mr.mergeSHA, Labels: append([]string(nil), mr.labels...)}
	for _, n := range mr.notes {
		note := Note{ID: n.id, Body: n.body, Author: n.author.username, System: n.system}
		for _, a := range n.awards {
			note.Awards = append(note.Awards, a.name)
		}
		out.Notes = append(out.Notes, note)
	}
	return out
}

// Status returns the latest commit status named name on sha.
func (f *Server) Status(r forge.Repo, sha, name string) (CommitStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.project(r).statuses[sha+"\x00"+name]
	return s, ok
}

// Statuses lists the names of the commit statuses on sha, sorted.
func (f *Server) Statuses(r forge.Repo, sha string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.project(r).statuses {
		if name, ok := strings.CutPrefix(k, sha+"\x00"); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// AddTrigger registers a pipeline trigger token on project r.
func (f *Server) AddTrigger(r forge.Repo, token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.project(r).triggers[token] = true
}

// Pipelines lists the pipelines created on project r, oldest first.
func (f *Server) Pipelines(r forge.Repo) []Pipeline {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Pipeline(nil), f.project(r).pipelines...)
}

// Merges counts the merges GitLab accepted in project r.
func (f *Server) Merges(r forge.Repo) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.project(r).merges
}

// Repository opens project r's bare repository, to inspect refs and
// objects directly.
func (f *Server) Repository(r forge.Repo) *git.Repository {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.git(f.project(r))
}
