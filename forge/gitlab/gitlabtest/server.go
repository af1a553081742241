// Package gitlabtest is a stateful GitLab for tests: repository content in
// real bare git repositories served over HTTP by git http-backend (behind
// GitLab's token-as-password basic auth), projects, merge requests with
// their diff versions, approvals, notes, issues, commit statuses,
// pipelines, users and groups in memory, all answered with GitLab's REST
// JSON, status codes and pagination headers. forge/gitlab's contract and
// focused tests and the bot's end-to-end tests all run against it.
package gitlabtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/kptbot/kptbot/internal/gitfixture"
)

// Server is a stateful GitLab: repository content, branches and tags
// live in real bare repositories (served by git http-backend behind
// GitLab's oauth2:token basic auth, read here with go-git); projects,
// merge requests with their diff versions, approvals, notes, issues,
// statuses, pipelines, users and groups live in memory. Answers use
// GitLab's REST JSON field names, status codes and messages, and lists
// are paginated with X-Page/X-Next-Page/X-Total and Link headers.
//
// Everything written through the API is authored by the token's user,
// BotUsername; the methods named for people (Approve, AddNote, SetAuthor)
// act as other users, as they would in GitLab's web UI.
type Server struct {
	// URL is the API root, with its path prefix (default /api/v4), for
	// gitlab.NewClient.
	URL string
	// GitURL serves group/project.git over HTTP, with Token as password
	// (any user name).
	GitURL string
	// HTTPClient reaches both servers.
	HTTPClient *http.Client

	t      testing.TB
	root   string
	prefix string // API root path, e.g. /api/v4 or /gitlab/api/v4

	mu sync.Mutex
	// maxPerPage caps per_page (GitLab: 100) so small data spans pages.
	maxPerPage int
	// noLink leaves out the Link header: pagination by X-Next-Page only.
	noLink bool
	// approvedAt sends approved_at in approvals (recent GitLab versions).
	approvedAt bool
	// approvalsRequired is what approvals_left counts down from (Free: 0).
	approvalsRequired int
	// intercept, when set, may answer a request first (return true).
	intercept func(w http.ResponseWriter, r *http.Request) bool
	now       time.Time
	nextID    int64
	projects  map[string]*fProject
	users     map[string]*fUser
	groups    map[string]map[int64]int // group path → user ID → access level
	bot       *fUser
	requests  []string
}

type fUser struct {
	id       int64
	username string
}

type fProject struct {
	id        int64
	path      string
	topics    []string
	members   map[int64]int
	mrs       map[int64]*fMR
	issues    map[int64]*fIssue
	statuses  map[string]CommitStatus // sha + "\x00" + name
	pipelines []Pipeline
	triggers  map[string]bool
	merges    int
	// visibility is private (the default), internal or public.
	visibility string
	// pipelineRequired is "Pipelines must succeed"
	// (only_allow_merge_if_pipeline_succeeds).
	pipelineRequired bool
}

type fIssue struct {
	iid                int64
	title, desc, state string
	labels             []string
}

// Token is the only token the fake accepts, on the API (PRIVATE-TOKEN)
// and over git (as the password).
const Token = "glpat-fake-token"

// BotUsername is the token's user, as GitLab names the bot user of a
// project access token: everything written through the API is by it.
const BotUsername = "project_7_bot_0123abcd"

// Option configures New.
type Option func(*Server)

// WithPrefix serves the API under prefix instead of /api/v4 (a
// self-managed instance under a relative URL, e.g. /gitlab/api/v4).
func WithPrefix(prefix string) Option { return func(f *Server) { f.prefix = prefix } }

// New starts a fake GitLab: its API at URL and its repositories over git
// at GitURL. Both stop when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	gitfixture.RequireGit(t)
	f := &Server{
		t: t, root: t.TempDir(), prefix: "/api/v4", maxPerPage: 100,
		now:      time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC),
		projects: map[string]*fProject{}, users: map[string]*fUser{}, groups: map[string]map[int64]int{},
	}
	for _, o := range opts {
		o(f)
	}
	f.bot = f.user(BotUsername)
	git := f.gitServer()
	api := httptest.NewServer(f.handler())
	t.Cleanup(api.Close)
	f.URL, f.GitURL, f.HTTPClient = api.URL+f.prefix, git.URL+"/", api.Client()
	return f
}

// gitServer serves the bare repositories with git http-backend, asking
// for the token the way GitLab does (any user, the token as password).
func (f *Server) gitServer() *httptest.Server {
	exec := gitfixture.Git(f.t, f.root, "--exec-path")
	h := &cgi.Handler{Path: filepath.Join(exec, "git-http-backend"), Env: []string{"GIT_PROJECT_ROOT=" + f.root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pw, ok := r.BasicAuth(); !ok || pw != Token {
			w.Header().Set("WWW-Authenticate", `Basic realm="GitLab"`)
			http.Error(w, "HTTP Basic: Access denied", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	f.t.Cleanup(srv.Close)
	return srv
}

func (f *Server) tick() time.Time {
	f.now = f.now.Add(time.Second)
	return f.now
}

func (f *Server) id() int64 {
	f.nextID++
	return f.nextID
}

// user returns the user named login, creating it.
func (f *Server) user(login string) *fUser {
	u, ok := f.users[login]
	if !ok {
		u = &fUser{id: f.id() + 100, username: login}
		f.users[login] = u
	}
	return u
}

func (f *Server) userByID(id int64) *fUser {
	for _, u := range f.users {
		if u.id == id {
			return u
		}
	}
	return nil
}

func (f *Server) bare(path string) string { return filepath.Join(f.root, path+".git") }

func (f *Server) git(p *fProject) *git.Repository {
	repo, err := git.PlainOpen(f.bare(p.path))
	if err != nil {
		f.t.Fatalf("fake GitLab: opening %s: %v", p.path, err)
	}
	return repo
}

// resolve finds a commit by branch, tag (peeled) or SHA, as GitLab's ref
// parameters do.
func resolve(repo *git.Repository, ref string) (*object.Commit, error) {
	for _, n := range []plumbing.ReferenceName{plumbing.NewBranchReferenceName(ref), plumbing.NewTagReferenceName(ref)} {
		if rf, err := repo.Reference(n, true); err == nil {
			if tag, err := repo.TagObject(rf.Hash()); err == nil {
				return tag.Commit()
			}
			return repo.CommitObject(rf.Hash())
		}
	}
	if !plumbing.IsHash(ref) {
		return nil, plumbing.ErrReferenceNotFound
	}
	return repo.CommitObject(plumbing.NewHash(ref))
}

func branchHead(repo *git.Repository, branch string) string {
	rf, err := repo.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return ""
	}
	return rf.Hash().String()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// message answers GitLab's error shape: {"message": ...}.
func message(w http.ResponseWriter, status int, msg any) {
	writeJSON(w, status, map[string]any{"message": msg})
}

func decodeBody(r *http.Request) map[string]any {
	m := map[string]any{}
	json.NewDecoder(r.Body).Decode(&m)
	return m
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// labels reads GitLab's comma-separated labels parameter.
func labels(s string) []string {
	out := []string{}
	for _, l := range strings.Split(s, ",") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// page writes one page of items with GitLab's offset pagination headers.
func (f *Server) page(w http.ResponseWriter, r *http.Request, items []any) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 20
	}
	per = min(per, f.maxPerPage)
	n, _ := strconv.Atoi(q.Get("page"))
	n = max(n, 1)
	pages := max((len(items)+per-1)/per, 1)
	lo, hi := min((n-1)*per, len(items)), min(n*per, len(items))
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(n))
	h.Set("X-Per-Page", strconv.Itoa(per))
	h.Set("X-Total", strconv.Itoa(len(items)))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	h.Set("X-Next-Page", "")
	h.Set("X-Prev-Page", "")
	link := func(p int, rel string) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(per))
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: q.Encode()}
		return fmt.Sprintf(`<%s>; rel="%s"`, u.String(), rel)
	}
	var links []string
	if n < pages {
		h.Set("X-Next-Page", strconv.Itoa(n+1))
		links = append(links, link(n+1, "next"))
	}
	if n > 1 {
		h.Set("X-Prev-Page", strconv.Itoa(n-1))
		links = append(links, link(n-1, "prev"))
	}
	links = append(links, link(1, "first"), link(pages, "last"))
	if !f.noLink {
		h.Set("Link", strings.Join(links, ", "))
	}
	writeJSON(w, http.StatusOK, items[lo:hi])
}

type projectHandler func(w http.ResponseWriter, r *http.Request, p *fProject)

// handler is the REST API: every request needs the token, is recorded,
// and runs under the fake's lock.
func (f *Server) handler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h http.HandlerFunc) {
		method, path, _ := strings.Cut(pattern, " ")
		mux.HandleFunc(method+" "+f.prefix+path, func(w http.ResponseWriter, r *http.Request) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.requests = append(f.requests, r.Method+" "+strings.TrimPrefix(r.URL.EscapedPath(), f.prefix))
			if f.intercept != nil && f.intercept(w, r) {
				return
			}
			if r.Header.Get("Private-Token") != Token {
				message(w, http.StatusUnauthorized, "401 Unauthorized")
				return
			}
			h(w, r)
		})
	}
	project := func(pattern string, h projectHandler) {
		handle(pattern, func(w http.ResponseWriter, r *http.Request) {
			id := r.PathValue("id")
			for _, p := range f.projects {
				if p.path == id || strconv.FormatInt(p.id, 10) == id {
					h(w, r, p)
					return
				}
			}
			message(w, http.StatusNotFound, "404 Project Not Found")
		})
	}
	f.projectRoutes(handle, project)
	f.ciRoutes(project)
	f.repositoryRoutes(project)
	f.tagRoutes(project)
	f.mergeRequestRoutes(project)
	f.mergeRoutes(project)
	f.noteRoutes(project)
	f.issueRoutes(project)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.t.Errorf("fake GitLab: unexpected %s %s", r.Method, r.URL.EscapedPath())
		message(w, http.StatusNotFound, "404 Not Found")
	})
	return mux
}

func userJSON(u *fUser) map[string]any {
	return map[string]any{"id": u.id, "username": u.username, "name": u.username, "state": "active", "web_url": "https://gitlab.example/" + u.username}
}

func (f *Server) projectJSON(p *fProject) map[string]any {
	head, _ := f.git(p).Reference(plumbing.HEAD, false)
	def := ""
	if head != nil {
		def = head.Target().Short()
	}
	return map[string]any{
		"id": p.id, "path_with_namespace": p.path, "path": filepath.Base(p.path), "name": filepath.Base(p.path),
		"default_branch": def, "http_url_to_repo": f.GitURL + p.path + ".git", "ssh_url_to_repo": "git@gitlab.example:" + p.path + ".git",
		"web_url": "https://gitlab.example/" + p.path, "visibility": p.visibility, "topics": append([]string{}, p.topics...), "archived": false,
		"only_allow_merge_if_pipeline_succeeds": p.pipelineRequired,
	}
}

// members returns a project's or group's effective members: direct ones
// and those of every ancestor group (GitLab's members/all).
func (f *Server) members(path string, direct map[int64]int) map[int64]int {
	out := map[int64]int{}
	for g := path; g != "."; g = filepath.Dir(g) {
		for id, lvl := range f.groups[g] {
			out[id] = max(out[id], lvl)
		}
	}
	for id, lvl := range direct {
		out[id] = max(out[id], lvl)
	}
	return out
}

func memberJSON(u *fUser, level int) map[string]any {
	m := userJSON(u)
	m["access_level"] = level
	return m
}

func (f *Server) projectRoutes(handle func(string, http.HandlerFunc), project func(string, projectHandler)) {
	handle("GET /projects", func(w http.ResponseWriter, r *http.Request) {
		var items []any
		paths := make([]string, 0, len(f.projects))
		for p := range f.projects {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, path := range paths {
			p := f.projects[path]
			if _, ok := f.members(p.path, p.members)[f.bot.id]; ok || r.URL.Query().Get("membership") != "true" {
				items = append(items, f.projectJSON(p))
			}
		}
		f.page(w, r, items)
	})
	project("GET /projects/{id}", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		writeJSON(w, http.StatusOK, f.projectJSON(p))
	})
	handle("GET /user", func(w http.ResponseWriter, r *http.Request) {
		u := userJSON(f.bot)
		u["bot"] = true
		writeJSON(w, http.StatusOK, u)
	})
	handle("GET /users", func(w http.ResponseWriter, r *http.Request) {
		items := []any{}
		if u, ok := f.users[r.URL.Query().Get("username")]; ok {
			items = append(items, userJSON(u))
		}
		f.page(w, r, items)
	})
	project("GET /projects/{id}/members/all/{uid}", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		uid, _ := strconv.ParseInt(r.PathValue("uid"), 10, 64)
		lvl, ok := f.members(p.path, p.members)[uid]
		if u := f.userByID(uid); ok && u != nil {
			writeJSON(w, http.StatusOK, memberJSON(u, lvl))
			return
		}
		message(w, http.StatusNotFound, "404 Not found")
	})
	handle("GET /groups/{id}", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := f.groups[r.PathValue("id")]; !ok {
			message(w, http.StatusNotFound, "404 Group Not Found")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": 77, "full_path": r.PathValue("id"), "path": filepath.Base(r.PathValue("id"))})
	})
	handle("GET /groups/{id}/members/all/{uid}", func(w http.ResponseWriter, r *http.Request) {
		g := r.PathValue("id")
		if _, ok := f.groups[g]; !ok {
			message(w, http.StatusNotFound, "404 Group Not Found")
			return
		}
		uid, _ := strconv.ParseInt(r.PathValue("uid"), 10, 64)
		lvl, ok := f.members(g, nil)[uid]
		if u := f.userByID(uid); ok && u != nil {
			writeJSON(w, http.StatusOK, memberJSON(u, lvl))
			return
		}
		message(w, http.StatusNotFound, "404 Not found")
	})
}

// ciRoutes are commit statuses and pipelines.
func (f *Server) ciRoutes(project func(string, projectHandler)) {
	project("POST /projects/{id}/statuses/{sha}", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		sha := r.PathValue("sha")
		if _, err := f.git(p).CommitObject(plumbing.NewHash(sha)); err != nil || !plumbing.IsHash(sha) {
			message(w, http.StatusNotFound, "404 Commit Not Found")
			return
		}
		in := decodeBody(r)
		state, name := str(in, "state"), str(in, "name")
		if name == "" {
			name = "default"
		}
		if prev := p.statuses[sha+"\x00"+name]; prev.State == state {
			message(w, http.StatusBadRequest, fmt.Sprintf("Cannot transition status via :%s from :%s (Reason(s): Status cannot transition via \"%s\")", state, prev.State, state))
			return
		}
		p.statuses[sha+"\x00"+name] = CommitStatus{State: state, Description: str(in, "description"), TargetURL: str(in, "target_url")}
		writeJSON(w, http.StatusCreated, map[string]any{"id": f.id(), "sha": sha, "status": state, "name": name,
			"description": in["description"], "target_url": in["target_url"], "author": userJSON(f.bot)})
	})
	// The latest status of each name on a commit (GitLab's all=false).
	project("GET /projects/{id}/repository/commits/{sha}/statuses", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		out := []map[string]any{}
		sha := r.PathValue("sha")
		for k, st := range p.statuses {
			name, ok := strings.CutPrefix(k, sha+"\x00")
			if !ok || (r.URL.Query().Get("name") != "" && r.URL.Query().Get("name") != name) {
				continue
			}
			out = append(out, map[string]any{"id": f.id(), "sha": sha, "status": st.State, "name": name,
				"description": st.Description, "target_url": st.TargetURL, "author": userJSON(f.bot)})
		}
		sort.Slice(out, func(i, j int) bool { return out[i]["name"].(string) < out[j]["name"].(string) })
		writeJSON(w, http.StatusOK, out)
	})
	pipeline := func(w http.ResponseWriter, p *fProject, ref string, vars map[string]any, source string) {
		c, err := resolve(f.git(p), ref)
		if err != nil {
			message(w, http.StatusBadRequest, map[string]any{"base": []string{"Reference not found"}})
			return
		}
		pl := map[string]any{"id": f.id(), "iid": len(p.pipelines) + 1, "status": "created", "ref": ref, "sha": c.Hash.String(), "source": source}
		p.pipelines = append(p.pipelines, Pipeline{Ref: ref, Variables: vars, Source: source})
		writeJSON(w, http.StatusCreated, pl)
	}
	project("POST /projects/{id}/pipeline", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		in := decodeBody(r)
		vars := map[string]any{}
		list, _ := in["variables"].([]any)
		for _, v := range list {
			m, _ := v.(map[string]any)
			vars[str(m, "key")] = m["value"]
		}
		pipeline(w, p, str(in, "ref"), vars, "api")
	})
	project("POST /projects/{id}/trigger/pipeline", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		in := decodeBody(r)
		if !p.triggers[str(in, "token")] {
			message(w, http.StatusNotFound, "404 Not Found")
			return
		}
		vars, _ := in["variables"].(map[string]any)
		pipeline(w, p, str(in, "ref"), vars, "trigger")
	})
}
