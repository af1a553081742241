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
)

type fakeComment struct {
	// repo and number are the issue or pull request commented on.
	repo             string
	number           int
	body             string
	author           string
	created, updated time.Time
}

type fakeIssue struct {
	title, body string
	labels      []string
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
