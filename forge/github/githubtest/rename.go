package githubtest

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kptbot/kptbot/forge"
)

// Repository identity as GitHub keeps it: every repository has a numeric
// id that never changes, its REST objects and webhook payloads carry it,
// and a renamed repository's old name keeps answering with a redirect
// (301 for GET and HEAD, 307 for other methods, to
// /repositories/{id}/...) until a new repository is created under it.

// firstRepoID is where the fake's repository ids start: far from the
// ids in the real payload samples, so a payload whose repository.id was
// not set to the fake's id is seen not to match.
const firstRepoID = 700000001

// RepoID is the id GitHub gave repository r (by its current name; 0 when
// there is none).
func (f *Server) RepoID(r forge.Repo) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ids[r.FullName]
}

// newRepo gives a repository created under name its id, and takes the
// name from a renamed repository that was still redirected from it.
func (f *Server) newRepo(name string) {
	if _, ok := f.ids[name]; ok {
		return
	}
	if f.lastRepoID == 0 {
		f.lastRepoID = firstRepoID - 1
	}
	f.lastRepoID++
	f.ids[name] = f.lastRepoID
	delete(f.moved, name)
}

// Rename renames repository r to newName (owner/name; another owner is a
// transfer), as its admin would: the repository keeps its id, content,
// pull requests, issues, permissions and installations, and r's old name
// redirects to it until a repository is created under that name.
func (f *Server) Rename(r forge.Repo, newName string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := r.FullName
	id, ok := f.ids[old]
	if !ok {
		f.t.Fatalf("githubtest: renaming %s: no such repository", old)
	}
	if _, taken := f.ids[newName]; taken {
		f.t.Fatalf("githubtest: renaming %s to %s: name already exists on this account", old, newName)
	}
	if err := os.MkdirAll(filepath.Dir(f.bare(newName)), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(f.bare(old), f.bare(newName)); err != nil {
		f.t.Fatal(err)
	}
	delete(f.ids, old)
	f.ids[newName] = id
	for from, to := range f.moved {
		if to == old {
			f.moved[from] = newName
		}
	}
	delete(f.moved, newName)
	f.moved[old] = newName
	f.renameState(old, newName)
}

// renameState moves what the fake keeps by repository name.
func (f *Server) renameState(old, newName string) {
	moveKey(f.prs, old, newName)
	moveKey(f.reviews, old, newName)
	moveKey(f.issues, old, newName)
	moveKey(f.numbers, old, newName)
	moveKey(f.merges, old, newName)
	moveKey(f.private, old, newName)
	movePrefix(f.perms, old+":", newName+":")
	movePrefix(f.required, old+"\x00", newName+"\x00")
	movePrefix(f.checks, old+"\x00", newName+"\x00")
	for id, c := range f.comments {
		if c.repo == old {
			c.repo = newName
			f.comments[id] = c
		}
	}
	if f.app != nil {
		for inst, repos := range f.app.installs {
			for i, n := range repos {
				if strings.EqualFold(n, old) {
					repos[i] = newName
				}
			}
			f.app.installs[inst] = repos
		}
	}
}

func moveKey[V any](m map[string]V, old, newName string) {
	if v, ok := m[old]; ok {
		delete(m, old)
		m[newName] = v
	}
}

func movePrefix[V any](m map[string]V, old, newName string) {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	for _, k := range keys {
		if rest, ok := strings.CutPrefix(k, old); ok {
			m[newName+rest] = m[k]
			delete(m, k)
		}
	}
}

// redirectAPI answers a REST request for a renamed repository's old
// name as GitHub does; it reports false when name is not one.
func (f *Server) redirectAPI(w http.ResponseWriter, r *http.Request, name string) bool {
	to, ok := f.moved[name]
	if !ok {
		return false
	}
	rest := strings.TrimPrefix(r.URL.Path, "/repos/"+name)
	loc := f.URL + "/repositories/" + strconv.FormatInt(f.ids[to], 10) + rest
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	status := http.StatusMovedPermanently
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		status = http.StatusTemporaryRedirect
	}
	w.Header().Set("Location", loc)
	writeJSON(w, status, map[string]string{"message": "Moved Permanently", "url": loc,
		"documentation_url": "https://docs.github.com/rest/guides/best-practices-for-using-the-rest-api#follow-redirects"})
	return true
}

// byID turns GitHub's /repositories/{id}/... form of a repository's
// path, where its redirects point, into the /repos/{owner}/{repo}/...
// form its OpenAPI description and the fake's routes use.
func (f *Server) byID(r *http.Request) *http.Request {
	rest, ok := strings.CutPrefix(r.URL.Path, "/repositories/")
	if !ok {
		return r
	}
	idText, tail, _ := strings.Cut(rest, "/")
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return r
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for name, have := range f.ids {
		if have == id {
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/repos/" + name
			if tail != "" {
				r2.URL.Path += "/" + tail
			}
			r2.URL.RawPath = ""
			return r2
		}
	}
	return r
}

// redirectGit answers git's request for a renamed repository's old
// name with a redirect to its new one, as github.com does for clones and
// fetches; it reports false when the path is not under such a name.
func (f *Server) redirectGit(w http.ResponseWriter, r *http.Request) bool {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	if len(parts) < 2 {
		return false
	}
	name := parts[0] + "/" + strings.TrimSuffix(parts[1], ".git")
	f.mu.Lock()
	to, ok := f.moved[name]
	f.mu.Unlock()
	if !ok {
		return false
	}
	loc := "/" + to + ".git"
	if len(parts) == 3 {
		loc += "/" + parts[2]
	}
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, loc, http.StatusMovedPermanently)
	return true
}

// repoJSON is the id and names of repository name, as GitHub's
// repository objects carry them.
func (f *Server) repoJSON(name string) map[string]any {
	f.newRepo(name) // one made on disk outside Seed
	visibility := "public"
	if f.private[name] {
		visibility = "private"
	}
	owner, short, _ := strings.Cut(name, "/")
	return map[string]any{"id": f.ids[name], "node_id": fmt.Sprintf("R_%d", f.ids[name]), "name": short, "full_name": name,
		"default_branch": "main", "clone_url": f.GitURL + name + ".git", "private": f.private[name], "visibility": visibility, "owner": userJSON(owner)}
}
