package githubtest

import (
	"encoding/json"
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
		"head":     map[string]any{"ref": p.head, "sha": headSHA, "repo": f.repoJSON(name)},
		"base":     map[string]any{"ref": p.base, "repo": f.repoJSON(name)},
	}
	if p.merged {
		out["merge_commit_sha"], out["merged_at"] = p.mergeSH, "2026-11-22T00:00:00Z"
	}
	return out
}

// pullRoutes serve pull requests: listed, opened, read, edited, their
// reviews, and merged.
func (f *Server) pullRoutes(route routeFunc) {
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
		if p, ok := f.pull(w, r, name); ok {
			writeJSON(w, http.StatusOK, f.prJSON(repo, name, p))
		}
	})
	route("PATCH /repos/{owner}/{repo}/pulls/{n}", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string) {
		p, ok := f.pull(w, r, name)
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
	route("PUT /repos/{owner}/{repo}/pulls/{n}/merge", f.mergePull)
}

// pull is the pull request the path names, or a 404 written.
func (f *Server) pull(w http.ResponseWriter, r *http.Request, name string) (*fakePR, bool) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	p, ok := f.prs[name][n]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	}
	return p, ok
}

// mergePull merges a pull request as GitHub does: never a draft or a
// closed one, and only the head the caller names (409 when it moved).
func (f *Server) mergePull(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string) {
	p, ok := f.pull(w, r, name)
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

// graphQLRoutes serve the one GraphQL call the adapter makes: a pull
// request turned into a draft or marked ready for review.
func (f *Server) graphQLRoutes(mux *http.ServeMux) {
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
}
