package githubtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

// Server is a stateful GitHub: repository content, branches and tags
// live in real bare repositories (pushed to through git http-backend, read
// with go-git), pull requests, reviews and comments in memory. Its REST
// requests are checked against GitHub's OpenAPI description and its
// answers use GitHub's JSON and status codes, so forgetest.Contract can
// run against the real adapter.
type Server struct {
	// URL is the REST API root; GitURL serves owner/name.git.
	URL, GitURL string

	t    *testing.T
	root string

	mu       sync.Mutex
	prs      map[string]map[int]*fakePR
	reviews  map[string]map[int][]forge.Review
	comments map[int64]fakeComment
	issues   map[string]map[int]*fakeIssue
	numbers  map[string]int // last issue/PR number per repository
	nextID   int64
	perms    map[string]string
	checks   map[string]CheckRun
	// app is the GitHub App mode's state (nil: no credentials checked).
	app *appState
	// intercept answers a request before the fake when it returns true.
	intercept func(w http.ResponseWriter, r *http.Request) bool
	merges    map[string]int
	// private are the repositories that are not public.
	private map[string]bool
	// required are the status checks each protected branch requires, by
	// repository and branch.
	required map[string][]string
	clock    time.Time
	// ids are the repositories' ids by current name; moved maps a
	// renamed repository's old names to its current one (rename.go).
	ids        map[string]int64
	moved      map[string]string
	lastRepoID int64
}

// tick is the fake's clock: one second (GitHub's timestamp resolution)
// per recorded event, so creation times order as the events happened.
func (f *Server) tick() time.Time {
	if f.clock.IsZero() {
		f.clock = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	}
	f.clock = f.clock.Add(time.Second)
	return f.clock
}

// number hands out the next issue or pull request number: GitHub numbers
// both from one sequence.
func (f *Server) number(repo string) int {
	f.numbers[repo]++
	return f.numbers[repo]
}

// New starts a fake GitHub: its REST API at URL (requests checked against
// GitHub's OpenAPI description) and its repositories over git at GitURL
// (URL + "owner/name.git"). Both stop when the test ends.
func New(t *testing.T) *Server {
	t.Helper()
	f := &Server{t: t, root: t.TempDir(), prs: map[string]map[int]*fakePR{}, reviews: map[string]map[int][]forge.Review{}, comments: map[int64]fakeComment{},
		issues: map[string]map[int]*fakeIssue{}, numbers: map[string]int{}, perms: map[string]string{}, checks: map[string]CheckRun{}, private: map[string]bool{}, required: map[string][]string{},
		ids: map[string]int64{}, moved: map[string]string{}}
	gitAuthed := f.gitAuth(gitfixture.HTTPHandler(t, f.root))
	gitSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.redirectGit(w, r) {
			gitAuthed.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(gitSrv.Close)
	routes := f.handler()
	checked := LoadContract(t).Middleware(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, ok := f.authorize(w, r)
		if !ok {
			return
		}
		f.mu.Lock()
		hook := f.intercept
		f.mu.Unlock()
		if hook != nil && hook(w, r) {
			return
		}
		routes.ServeHTTP(w, r)
	}))
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checked.ServeHTTP(w, f.byID(r))
	}))
	t.Cleanup(api.Close)
	f.URL, f.GitURL = api.URL, gitSrv.URL+"/"
	return f
}

// Seed creates repository r with files on branch and returns the commit.
func (f *Server) Seed(r forge.Repo, branch string, files map[string][]byte) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seed(r, branch, files)
}

// Protect gives branch of r a protection that requires the named status
// checks, as the branch listing then shows it.
func (f *Server) Protect(r forge.Repo, branch string, checks ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.required[r.FullName+"\x00"+branch] = checks
}

// SetPrivate makes repository r private (repositories are public until
// then), as its listing reports it.
func (f *Server) SetPrivate(r forge.Repo, private bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.private[r.FullName] = private
}

// Review adds a review to a pull request, as a reviewer would.
func (f *Server) Review(r forge.Repo, number int, rv forge.Review) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reviews[r.FullName] == nil {
		f.reviews[r.FullName] = map[int][]forge.Review{}
	}
	if rv.SubmittedAt.IsZero() {
		rv.SubmittedAt = f.tick()
	}
	f.reviews[r.FullName][number] = append(f.reviews[r.FullName][number], rv)
}

// AddComment adds a comment by login, as a human would, and returns its id.
func (f *Server) AddComment(r forge.Repo, number int, login, body string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	at := f.tick()
	f.comments[f.nextID] = fakeComment{repo: r.FullName, number: number, body: body, author: login, created: at, updated: at}
	return f.nextID
}

// SetAuthor makes login the author of pull request number.
func (f *Server) SetAuthor(r forge.Repo, number int, login string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.prs[r.FullName][number]; ok {
		p.author = login
	}
}

// SetPermission gives login a permission (admin, write, read) on r.
func (f *Server) SetPermission(r forge.Repo, login, perm string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.perms[r.FullName+":"+login] = perm
}

// CheckRun is a check run the fake received.
type CheckRun struct {
	Name, HeadSHA, Status, Conclusion, Title, Summary string
	// Annotations are "path:line: level: message".
	Annotations []string
}

// Check returns the latest check run named name on sha.
func (f *Server) Check(r forge.Repo, sha, name string) (CheckRun, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.checks[r.FullName+"\x00"+sha+"\x00"+name]
	return c, ok
}

// Intercept lets h answer any API request first (returning true), to
// inject failures such as a secondary rate limit.
func (f *Server) Intercept(h func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.intercept = h
}

// Merges counts merge requests GitHub accepted, per repository.
func (f *Server) Merges(r forge.Repo) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.merges[r.FullName]
}

func (f *Server) bare(fullName string) string { return filepath.Join(f.root, fullName+".git") }

func (f *Server) open(w http.ResponseWriter, r *http.Request) (*git.Repository, string, bool) {
	name := r.PathValue("owner") + "/" + r.PathValue("repo")
	repo, err := git.PlainOpen(f.bare(name))
	if err != nil {
		if f.redirectAPI(w, r, name) {
			return nil, "", false
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return nil, "", false
	}
	return repo, name, true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func validationFailed(w http.ResponseWriter, errs ...map[string]string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed", "errors": errs})
}

func (f *Server) handler() http.Handler {
	mux := http.NewServeMux()
	route := func(pattern string, h func(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			f.mu.Lock()
			defer f.mu.Unlock()
			repo, name, ok := f.open(w, r)
			if ok {
				h(w, r, repo, name)
			}
		})
	}
	f.contentRoutes(route)
	f.pullRoutes(route)
	f.appRoutes(mux)
	f.gitRoutes(route)
	f.issueRoutes(route)
	f.graphQLRoutes(mux)
	f.accountRoutes(mux, route)
	return mux
}

// accountRoutes serve who may do what: collaborators' permissions, the
// token's user, team memberships and the installation's repositories.
func (f *Server) accountRoutes(mux *http.ServeMux, route routeFunc) {
	route("GET /repos/{owner}/{repo}/collaborators/{user}/permission", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, name string) {
		p, ok := f.perms[name+":"+r.PathValue("user")]
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": r.PathValue("user") + " is not a user"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"permission": p, "role_name": p, "user": userJSON(r.PathValue("user"))})
	})
	// The token acts as the bot account, which authors everything the
	// API writes.
	mux.HandleFunc("GET /user", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := installationOf(r); ok {
			writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
			return
		}
		writeJSON(w, http.StatusOK, userJSON(botLogin))
	})
	mux.HandleFunc("GET /orgs/{org}/teams/{team}/memberships/{user}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	})
	mux.HandleFunc("GET /installation/repositories", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var repos []map[string]any
		matches, _ := filepath.Glob(filepath.Join(f.root, "*", "*.git"))
		sort.Strings(matches)
		inst, isInst := installationOf(r)
		for _, m := range matches {
			rel, _ := filepath.Rel(f.root, m)
			name := strings.TrimSuffix(filepath.ToSlash(rel), ".git")
			if isInst && !f.app.installed(inst, name) {
				continue
			}
			repos = append(repos, f.repoJSON(name))
		}
		writeJSON(w, http.StatusOK, map[string]any{"total_count": len(repos), "repositories": repos})
	})
}

type routeFunc func(pattern string, h func(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string))
