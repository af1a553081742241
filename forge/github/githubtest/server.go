package githubtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
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
	clock   time.Time
}

type fakeComment struct {
	// repo and number are the issue or pull request commented on.
	repo             string
	number           int
	body             string
	author           string
	created, updated time.Time
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

type fakeIssue struct {
	title, body string
	labels      []string
}

// number hands out the next issue or pull request number: GitHub numbers
// both from one sequence.
func (f *Server) number(repo string) int {
	f.numbers[repo]++
	return f.numbers[repo]
}

type fakePR struct {
	number              int
	title, body, state  string
	draft, merged       bool
	head, base, mergeSH string
	// mergedHead is the head commit that was merged: GitHub keeps
	// head.sha at it after the merge.
	mergedHead string
	labels     []string
	author     string
}

// New starts a fake GitHub: its REST API at URL (requests checked against
// GitHub's OpenAPI description) and its repositories over git at GitURL
// (URL + "owner/name.git"). Both stop when the test ends.
func New(t *testing.T) *Server {
	t.Helper()
	f := &Server{t: t, root: t.TempDir(), prs: map[string]map[int]*fakePR{}, reviews: map[string]map[int][]forge.Review{}, comments: map[int64]fakeComment{},
		issues: map[string]map[int]*fakeIssue{}, numbers: map[string]int{}, perms: map[string]string{}, checks: map[string]CheckRun{}, private: map[string]bool{}}
	gitSrv := httptest.NewServer(f.gitAuth(gitfixture.HTTPHandler(t, f.root)))
	t.Cleanup(gitSrv.Close)
	routes := f.handler()
	api := httptest.NewServer(LoadContract(t).Middleware(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	})))
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

// ForcePush moves branch to sha, as a person's force push would.
func (f *Server) ForcePush(r forge.Repo, branch, sha string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	repo, err := git.PlainOpen(f.bare(r.FullName))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), plumbing.NewHash(sha))); err != nil {
		f.t.Fatal(err)
	}
}

func (f *Server) bare(fullName string) string { return filepath.Join(f.root, fullName+".git") }

func (f *Server) seed(r forge.Repo, branch string, files map[string][]byte) string {
	bare := f.bare(r.FullName)
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
	return gitfixture.CommitAndTag(f.t, wt, "seed", "")
}

func (f *Server) open(w http.ResponseWriter, r *http.Request) (*git.Repository, string, bool) {
	name := r.PathValue("owner") + "/" + r.PathValue("repo")
	repo, err := git.PlainOpen(f.bare(name))
	if err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return nil, "", false
	}
	return repo, name, true
}

// resolve finds a commit by branch, tag (peeled) or SHA, as GitHub's ref
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
	return repo.CommitObject(plumbing.NewHash(ref))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func validationFailed(w http.ResponseWriter, errs ...map[string]string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed", "errors": errs})
}

func (f *Server) prJSON(repo *git.Repository, name string, p *fakePR) map[string]any {
	headSHA := p.mergedHead
	if rf, err := repo.Reference(plumbing.NewBranchReferenceName(p.head), true); err == nil && !p.merged {
		headSHA = rf.Hash().String()
	}
	labels := []map[string]string{}
	for _, l := range p.labels {
		labels = append(labels, map[string]string{"name": l})
	}
	out := map[string]any{
		"number": p.number, "node_id": fmt.Sprintf("PR_%d", p.number), "state": p.state, "title": p.title, "body": p.body,
		"draft": p.draft, "merged": p.merged, "labels": labels, "user": userJSON(p.author),
		"html_url": fmt.Sprintf("https://github.com/%s/pull/%d", name, p.number),
		"head":     map[string]any{"ref": p.head, "sha": headSHA, "repo": map[string]string{"full_name": name}},
		"base":     map[string]any{"ref": p.base, "repo": map[string]string{"full_name": name}},
	}
	if p.merged {
		out["merge_commit_sha"], out["merged_at"] = p.mergeSH, "2026-11-22T00:00:00Z"
	}
	return out
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
	route("GET /repos/{owner}/{repo}", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, name string) {
		writeJSON(w, http.StatusOK, map[string]any{"full_name": name, "name": r.PathValue("repo"), "default_branch": "main",
			"clone_url": f.GitURL + name + ".git", "private": false})
	})
	route("GET /repos/{owner}/{repo}/contents/{path...}", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, _ string) {
		c, err := resolve(repo, r.URL.Query().Get("ref"))
		if err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "No commit found for the ref " + r.URL.Query().Get("ref")})
			return
		}
		file, err := c.File(r.PathValue("path"))
		if err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		body, _ := file.Contents()
		writeJSON(w, http.StatusOK, map[string]any{"type": "file", "encoding": "base64", "size": len(body), "name": filepath.Base(file.Name),
			"path": file.Name, "sha": file.Hash.String(), "content": base64.StdEncoding.EncodeToString([]byte(body))})
	})
	route("GET /repos/{owner}/{repo}/git/trees/{ref}", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, _ string) {
		c, err := resolve(repo, r.PathValue("ref"))
		if err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		var entries []map[string]any
		files, _ := c.Files()
		files.ForEach(func(fl *object.File) error {
			entries = append(entries, map[string]any{"path": fl.Name, "type": "blob", "mode": "100644", "sha": fl.Hash.String()})
			return nil
		})
		writeJSON(w, http.StatusOK, map[string]any{"sha": c.TreeHash.String(), "truncated": false, "tree": entries})
	})
	route("GET /repos/{owner}/{repo}/tags", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, _ string) {
		out := []map[string]any{}
		tags, _ := repo.Tags()
		tags.ForEach(func(rf *plumbing.Reference) error {
			c, err := resolve(repo, rf.Name().Short())
			if err == nil {
				out = append(out, map[string]any{"name": rf.Name().Short(), "commit": map[string]string{"sha": c.Hash.String(), "url": "u"}, "zipball_url": "z", "tarball_url": "t", "node_id": "n"})
			}
			return nil
		})
		writeJSON(w, http.StatusOK, out)
	})
	route("GET /repos/{owner}/{repo}/branches", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, _ string) {
		out := []map[string]any{}
		bs, _ := repo.Branches()
		bs.ForEach(func(rf *plumbing.Reference) error {
			out = append(out, map[string]any{"name": rf.Name().Short(), "commit": map[string]string{"sha": rf.Hash().String(), "url": "u"}, "protected": false})
			return nil
		})
		writeJSON(w, http.StatusOK, out)
	})
	f.pullRoutes(route)
	f.appRoutes(mux)
	f.gitRoutes(route)
	f.issueRoutes(route)
	mux.HandleFunc("POST /graphql", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var q struct {
			Query     string            `json:"query"`
			Variables map[string]string `json:"variables"`
		}
		json.NewDecoder(r.Body).Decode(&q)
		n, _ := strconv.Atoi(strings.TrimPrefix(q.Variables["id"], "PR_"))
		for _, prs := range f.prs {
			if p, ok := prs[n]; ok {
				p.draft = strings.Contains(q.Query, "convertPullRequestToDraft")
				writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{}})
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"errors": []map[string]string{{"type": "NOT_FOUND", "message": "Could not resolve to a node with the global id of '" + q.Variables["id"] + "'"}}})
	})
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
			visibility := "public"
			if f.private[name] {
				visibility = "private"
			}
			repos = append(repos, map[string]any{"full_name": name, "default_branch": "main", "clone_url": f.GitURL + name + ".git",
				"private": f.private[name], "visibility": visibility, "owner": userJSON(strings.Split(name, "/")[0])})
		}
		writeJSON(w, http.StatusOK, map[string]any{"total_count": len(repos), "repositories": repos})
	})
	return mux
}

type routeFunc func(pattern string, h func(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string))

func (f *Server) pullRoutes(route routeFunc) {
	pr := func(w http.ResponseWriter, r *http.Request, name string) (*fakePR, bool) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		p, ok := f.prs[name][n]
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		}
		return p, ok
	}
	route("GET /repos/{owner}/{repo}/pulls", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string) {
		out := []map[string]any{}
		q := r.URL.Query()
		head := strings.TrimPrefix(q.Get("head"), r.PathValue("owner")+":")
		state := q.Get("state")
		if state == "" {
			state = "open"
		}
		var nums []int
		for n, p := range f.prs[name] {
			if (head == "" || p.head == head) && (state == "all" || p.state == state) {
				nums = append(nums, n)
			}
		}
		sort.Ints(nums)
		for _, n := range nums {
			out = append(out, f.prJSON(repo, name, f.prs[name][n]))
		}
		writeJSON(w, http.StatusOK, out)
	})
	route("POST /repos/{owner}/{repo}/pulls", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string) {
		var in struct {
			Title, Head, Base, Body string
			Draft                   bool
		}
		json.NewDecoder(r.Body).Decode(&in)
		if _, err := repo.Reference(plumbing.NewBranchReferenceName(in.Head), true); err != nil {
			validationFailed(w, map[string]string{"resource": "PullRequest", "field": "head", "code": "invalid"})
			return
		}
		for _, p := range f.prs[name] {
			if p.head == in.Head && p.state == "open" {
				validationFailed(w, map[string]string{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for " + r.PathValue("owner") + ":" + in.Head + "."})
				return
			}
		}
		if f.prs[name] == nil {
			f.prs[name] = map[int]*fakePR{}
		}
		p := &fakePR{number: f.number(name), title: in.Title, body: in.Body, draft: in.Draft, state: "open", head: in.Head, base: in.Base}
		f.prs[name][p.number] = p
		writeJSON(w, http.StatusCreated, f.prJSON(repo, name, p))
	})
	route("GET /repos/{owner}/{repo}/pulls/{n}", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string) {
		if p, ok := pr(w, r, name); ok {
			writeJSON(w, http.StatusOK, f.prJSON(repo, name, p))
		}
	})
	route("PATCH /repos/{owner}/{repo}/pulls/{n}", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string) {
		p, ok := pr(w, r, name)
		if !ok {
			return
		}
		var in struct{ Title, Body, State *string }
		json.NewDecoder(r.Body).Decode(&in)
		if in.Title != nil {
			p.title = *in.Title
		}
		if in.Body != nil {
			p.body = *in.Body
		}
		if in.State != nil {
			p.state = *in.State
		}
		writeJSON(w, http.StatusOK, f.prJSON(repo, name, p))
	})
	route("GET /repos/{owner}/{repo}/pulls/{n}/reviews", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, name string) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		out := []map[string]any{}
		for i, rv := range f.reviews[name][n] {
			out = append(out, map[string]any{"id": i + 1, "state": strings.ToUpper(string(rv.State)), "commit_id": rv.CommitSHA, "body": rv.Body,
				"user": userJSON(rv.Reviewer.Login), "submitted_at": rv.SubmittedAt.UTC().Format(time.RFC3339)})
		}
		writeJSON(w, http.StatusOK, out)
	})
	route("PUT /repos/{owner}/{repo}/pulls/{n}/merge", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string) {
		p, ok := pr(w, r, name)
		if !ok {
			return
		}
		var in struct{ SHA string }
		json.NewDecoder(r.Body).Decode(&in)
		head, _ := repo.Reference(plumbing.NewBranchReferenceName(p.head), true)
		if p.draft || p.state != "open" || head == nil {
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"message": "Pull Request is not mergeable"})
			return
		}
		if in.SHA != "" && in.SHA != head.Hash().String() {
			writeJSON(w, http.StatusConflict, map[string]string{"message": "Head branch was modified. Review and try the merge again."})
			return
		}
		sha, err := f.mergeCommit(repo, p, head.Hash())
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"message": err.Error()})
			return
		}
		p.state, p.merged, p.mergeSH, p.mergedHead = "closed", true, sha, head.Hash().String()
		if f.merges == nil {
			f.merges = map[string]int{}
		}
		f.merges[name]++
		writeJSON(w, http.StatusOK, map[string]any{"sha": sha, "merged": true, "message": "Pull Request successfully merged"})
	})
}

// mergeCommit records head's tree on the base branch as a merge commit.
func (f *Server) mergeCommit(repo *git.Repository, p *fakePR, head plumbing.Hash) (string, error) {
	base, err := repo.Reference(plumbing.NewBranchReferenceName(p.base), true)
	if err != nil {
		return "", err
	}
	hc, err := repo.CommitObject(head)
	if err != nil {
		return "", err
	}
	sig := object.Signature{Name: "GitHub", Email: "noreply@github.com", When: time.Now()}
	c := &object.Commit{Author: sig, Committer: sig, Message: fmt.Sprintf("Merge pull request #%d", p.number), TreeHash: hc.TreeHash,
		ParentHashes: []plumbing.Hash{base.Hash(), head}}
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

func (f *Server) gitRoutes(route routeFunc) {
	route("POST /repos/{owner}/{repo}/git/tags", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, _ string) {
		var in struct{ Tag, Message, Object, Type string }
		json.NewDecoder(r.Body).Decode(&in)
		if _, err := repo.CommitObject(plumbing.NewHash(in.Object)); err != nil {
			validationFailed(w, map[string]string{"resource": "Tag", "field": "object", "code": "invalid"})
			return
		}
		sig := object.Signature{Name: "kptbot", Email: "kptbot@localhost", When: time.Now()}
		tag := &object.Tag{Name: in.Tag, Message: in.Message, Tagger: sig, Target: plumbing.NewHash(in.Object), TargetType: plumbing.CommitObject}
		o := repo.Storer.NewEncodedObject()
		tag.Encode(o)
		h, _ := repo.Storer.SetEncodedObject(o)
		writeJSON(w, http.StatusCreated, map[string]any{"sha": h.String(), "tag": in.Tag, "message": in.Message, "node_id": "n", "url": "u",
			"object": map[string]string{"type": "commit", "sha": in.Object, "url": "u"}})
	})
	route("POST /repos/{owner}/{repo}/git/refs", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, _ string) {
		var in struct{ Ref, SHA string }
		json.NewDecoder(r.Body).Decode(&in)
		if _, err := repo.Reference(plumbing.ReferenceName(in.Ref), false); err == nil {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Reference already exists"})
			return
		}
		repo.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(in.Ref), plumbing.NewHash(in.SHA)))
		writeJSON(w, http.StatusCreated, map[string]any{"ref": in.Ref, "node_id": "n", "url": "u", "object": map[string]string{"type": "tag", "sha": in.SHA, "url": "u"}})
	})
	route("GET /repos/{owner}/{repo}/git/ref/{ref...}", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, _ string) {
		rf, err := repo.Reference(plumbing.ReferenceName("refs/"+r.PathValue("ref")), false)
		if err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		typ := "commit"
		if _, err := repo.TagObject(rf.Hash()); err == nil {
			typ = "tag"
		}
		writeJSON(w, http.StatusOK, map[string]any{"ref": rf.Name().String(), "node_id": "n", "url": "u", "object": map[string]string{"type": typ, "sha": rf.Hash().String(), "url": "u"}})
	})
	route("GET /repos/{owner}/{repo}/git/tags/{sha}", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, _ string) {
		tag, err := repo.TagObject(plumbing.NewHash(r.PathValue("sha")))
		if err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"sha": tag.Hash.String(), "tag": tag.Name, "message": tag.Message, "node_id": "n", "url": "u",
			"object": map[string]string{"type": "commit", "sha": tag.Target.String(), "url": "u"}})
	})
	// The latest run of each name on a commit (GitHub's filter=latest).
	route("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, name string) {
		runs := []map[string]any{}
		for k, c := range f.checks {
			if !strings.HasPrefix(k, name+"\x00"+r.PathValue("ref")+"\x00") {
				continue
			}
			if want := r.URL.Query().Get("check_name"); want != "" && want != c.Name {
				continue
			}
			runs = append(runs, map[string]any{"id": 1, "name": c.Name, "head_sha": c.HeadSHA, "status": c.Status, "conclusion": nilIfEmpty(c.Conclusion),
				"output": map[string]any{"title": c.Title, "summary": c.Summary, "annotations_count": len(c.Annotations)}})
		}
		sort.Slice(runs, func(i, j int) bool { return runs[i]["name"].(string) < runs[j]["name"].(string) })
		writeJSON(w, http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": runs})
	})
	route("POST /repos/{owner}/{repo}/check-runs", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string) {
		var in struct {
			Name       string `json:"name"`
			HeadSHA    string `json:"head_sha"`
			Status     string `json:"status"`
			Conclusion string `json:"conclusion"`
			Output     struct {
				Title       string `json:"title"`
				Summary     string `json:"summary"`
				Annotations []struct {
					Path      string `json:"path"`
					StartLine int    `json:"start_line"`
					Level     string `json:"annotation_level"`
					Message   string `json:"message"`
				} `json:"annotations"`
			} `json:"output"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		if _, err := repo.CommitObject(plumbing.NewHash(in.HeadSHA)); err != nil {
			validationFailed(w, map[string]string{"resource": "CheckRun", "code": "custom", "message": "No commit found for SHA: " + in.HeadSHA})
			return
		}
		run := CheckRun{Name: in.Name, HeadSHA: in.HeadSHA, Status: in.Status, Conclusion: in.Conclusion, Title: in.Output.Title, Summary: in.Output.Summary}
		for _, a := range in.Output.Annotations {
			run.Annotations = append(run.Annotations, fmt.Sprintf("%s:%d: %s: %s", a.Path, a.StartLine, a.Level, a.Message))
		}
		f.checks[name+"\x00"+in.HeadSHA+"\x00"+in.Name] = run
		writeJSON(w, http.StatusCreated, map[string]any{"id": 1, "name": in.Name, "head_sha": in.HeadSHA})
	})
	route("POST /repos/{owner}/{repo}/dispatches", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, _ string) {
		w.WriteHeader(http.StatusNoContent)
	})
}

func (f *Server) issueRoutes(route routeFunc) {
	route("PUT /repos/{owner}/{repo}/issues/{n}/labels", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, name string) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		var in struct{ Labels []string }
		json.NewDecoder(r.Body).Decode(&in)
		out := []map[string]string{}
		if p, ok := f.prs[name][n]; ok {
			p.labels = in.Labels
		}
		if is, ok := f.issues[name][n]; ok {
			is.labels = in.Labels
		}
		for _, l := range in.Labels {
			out = append(out, map[string]string{"name": l})
		}
		writeJSON(w, http.StatusOK, out)
	})
	route("POST /repos/{owner}/{repo}/issues/{n}/comments", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, name string) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if !f.exists(name, n) {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		var in struct{ Body string }
		json.NewDecoder(r.Body).Decode(&in)
		f.nextID++
		at := f.tick()
		f.comments[f.nextID] = fakeComment{repo: name, number: n, body: in.Body, author: botLogin, created: at, updated: at}
		writeJSON(w, http.StatusCreated, commentJSON(f.nextID, f.comments[f.nextID]))
	})
	route("GET /repos/{owner}/{repo}/issues/{n}/comments", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, name string) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if !f.exists(name, n) {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		var ids []int64
		for id, c := range f.comments {
			if c.number == n && strings.EqualFold(c.repo, name) {
				ids = append(ids, id)
			}
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		out := []map[string]any{}
		for _, id := range ids {
			out = append(out, commentJSON(id, f.comments[id]))
		}
		writeJSON(w, http.StatusOK, out)
	})
	f.issueCRUD(route)
	comment := func(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if c, ok := f.comments[id]; !ok || !strings.EqualFold(c.repo, name) {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return 0, false
		}
		return id, true
	}
	route("PATCH /repos/{owner}/{repo}/issues/comments/{id}", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, name string) {
		if id, ok := comment(w, r, name); ok {
			var in struct{ Body string }
			json.NewDecoder(r.Body).Decode(&in)
			c := f.comments[id]
			c.body, c.updated = in.Body, f.tick()
			f.comments[id] = c
			writeJSON(w, http.StatusOK, commentJSON(id, c))
		}
	})
	route("POST /repos/{owner}/{repo}/issues/comments/{id}/reactions", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, name string) {
		if _, ok := comment(w, r, name); ok {
			writeJSON(w, http.StatusCreated, map[string]any{"id": 1, "content": "+1"})
		}
	})
}

// botLogin authors everything written through the API.
const botLogin = "kptbot[bot]"

func userJSON(login string) map[string]any {
	if login == "" {
		login = botLogin
	}
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return map[string]any{"login": login, "id": len(login), "type": typ}
}

func commentJSON(id int64, c fakeComment) map[string]any {
	return map[string]any{"id": id, "body": c.body, "user": userJSON(c.author),
		"created_at": c.created.UTC().Format(time.RFC3339), "updated_at": c.updated.UTC().Format(time.RFC3339)}
}

// exists reports an issue or pull request numbered n.
func (f *Server) exists(repo string, n int) bool {
	_, pr := f.prs[repo][n]
	_, is := f.issues[repo][n]
	return pr || is
}

func (f *Server) issueJSON(name string, n int) map[string]any {
	is := f.issues[name][n]
	labels := []map[string]string{}
	for _, l := range is.labels {
		labels = append(labels, map[string]string{"name": l})
	}
	return map[string]any{"number": n, "title": is.title, "body": is.body, "state": "open", "labels": labels,
		"html_url": fmt.Sprintf("https://github.com/%s/issues/%d", name, n)}
}

func (f *Server) issueCRUD(route routeFunc) {
	route("POST /repos/{owner}/{repo}/issues", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, name string) {
		var in struct {
			Title, Body string
			Labels      []string
		}
		json.NewDecoder(r.Body).Decode(&in)
		if in.Title == "" {
			validationFailed(w, map[string]string{"resource": "Issue", "field": "title", "code": "missing_field"})
			return
		}
		if f.issues[name] == nil {
			f.issues[name] = map[int]*fakeIssue{}
		}
		n := f.number(name)
		f.issues[name][n] = &fakeIssue{title: in.Title, body: in.Body, labels: in.Labels}
		writeJSON(w, http.StatusCreated, f.issueJSON(name, n))
	})
	route("PATCH /repos/{owner}/{repo}/issues/{n}", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, name string) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		is, ok := f.issues[name][n]
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		var in struct{ Title, Body *string }
		json.NewDecoder(r.Body).Decode(&in)
		if in.Title != nil {
			is.title = *in.Title
		}
		if in.Body != nil {
			is.body = *in.Body
		}
		writeJSON(w, http.StatusOK, f.issueJSON(name, n))
	})
	route("GET /repos/{owner}/{repo}/issues", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string) {
		label := r.URL.Query().Get("labels")
		var nums []int
		for n, is := range f.issues[name] {
			for _, l := range is.labels {
				if l == label {
					nums = append(nums, n)
					break
				}
			}
		}
		sort.Ints(nums)
		out := []map[string]any{}
		for _, n := range nums {
			out = append(out, f.issueJSON(name, n))
		}
		// GitHub lists pull requests as issues too, marked pull_request.
		for n, p := range f.prs[name] {
			for _, l := range p.labels {
				if l == label && p.state == "open" {
					pr := f.prJSON(repo, name, p)
					pr["pull_request"] = map[string]string{"url": fmt.Sprintf("https://api.github.com/repos/%s/pulls/%d", name, n)}
					out = append(out, pr)
				}
			}
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// nilIfEmpty is JSON null for "" (GitHub's conclusion of an unfinished run).
func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
