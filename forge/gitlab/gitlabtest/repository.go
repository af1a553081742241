package gitlabtest

import (
	"io"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The fake's repository API: raw files, trees, commits, tags, branches.

func commitJSON(c *object.Commit) map[string]any {
	return map[string]any{"id": c.Hash.String(), "short_id": c.Hash.String()[:8], "title": strings.SplitN(c.Message, "\n", 2)[0],
		"message": c.Message, "author_name": c.Author.Name, "created_at": c.Committer.When.UTC().Format(time.RFC3339)}
}

func (f *Server) repositoryRoutes(project func(string, projectHandler)) {
	project("GET /projects/{id}/repository/files/{file}/raw", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		c, err := resolve(f.git(p), r.URL.Query().Get("ref"))
		if err != nil {
			message(w, http.StatusNotFound, "404 Commit Not Found")
			return
		}
		file, err := c.File(r.PathValue("file"))
		if err != nil {
			message(w, http.StatusNotFound, "404 File Not Found")
			return
		}
		rd, _ := file.Reader()
		defer rd.Close()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Gitlab-Commit-Id", c.Hash.String())
		io.Copy(w, rd)
	})
	project("GET /projects/{id}/repository/tree", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		q := r.URL.Query()
		c, err := resolve(f.git(p), q.Get("ref"))
		if err != nil {
			message(w, http.StatusNotFound, "404 Tree Not Found")
			return
		}
		tree, _ := c.Tree()
		dir := strings.Trim(q.Get("path"), "/")
		if dir != "" {
			if tree, err = tree.Tree(dir); err != nil {
				// Older GitLab answers a missing path like a missing ref.
				message(w, http.StatusNotFound, "404 Tree Not Found")
				return
			}
		}
		var items []any
		walker := object.NewTreeWalker(tree, q.Get("recursive") == "true", nil)
		defer walker.Close()
		for {
			name, e, err := walker.Next()
			if err != nil {
				break
			}
			typ, mode := "blob", "100644"
			if e.Mode == filemode.Dir {
				typ, mode = "tree", "040000"
			}
			items = append(items, map[string]any{"id": e.Hash.String(), "name": path.Base(name), "type": typ, "path": path.Join(dir, name), "mode": mode})
		}
		f.page(w, r, items)
	})
	project("GET /projects/{id}/repository/commits/{sha}", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		c, err := resolve(f.git(p), r.PathValue("sha"))
		if err != nil {
			message(w, http.StatusNotFound, "404 Commit Not Found")
			return
		}
		writeJSON(w, http.StatusOK, commitJSON(c))
	})
}

func (f *Server) tagRoutes(project func(string, projectHandler)) {
	project("GET /projects/{id}/repository/tags", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		var names []string
		tags, _ := f.git(p).Tags()
		tags.ForEach(func(rf *plumbing.Reference) error {
			names = append(names, rf.Name().Short())
			return nil
		})
		sort.Strings(names)
		var items []any
		for _, n := range names {
			if t, ok := f.tagJSON(p, n); ok {
				items = append(items, t)
			}
		}
		f.page(w, r, items)
	})
	project("GET /projects/{id}/repository/tags/{tag}", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		if t, ok := f.tagJSON(p, r.PathValue("tag")); ok {
			writeJSON(w, http.StatusOK, t)
			return
		}
		message(w, http.StatusNotFound, "404 Tag Not Found")
	})
	project("POST /projects/{id}/repository/tags", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		in := decodeBody(r)
		name, ref, msg := str(in, "tag_name"), str(in, "ref"), str(in, "message")
		repo := f.git(p)
		if _, err := repo.Reference(plumbing.NewTagReferenceName(name), false); err == nil {
			message(w, http.StatusBadRequest, "Tag "+name+" already exists")
			return
		}
		c, err := resolve(repo, ref)
		if err != nil {
			message(w, http.StatusBadRequest, "Target "+ref+" is invalid")
			return
		}
		target := c.Hash
		if msg != "" {
			sig := object.Signature{Name: "kptbot", Email: "kptbot@noreply.gitlab.example", When: f.tick()}
			tag := &object.Tag{Name: name, Message: msg, Tagger: sig, Target: c.Hash, TargetType: plumbing.CommitObject}
			o := repo.Storer.NewEncodedObject()
			if err := tag.Encode(o); err != nil {
				f.t.Fatal(err)
			}
			if target, err = repo.Storer.SetEncodedObject(o); err != nil {
				f.t.Fatal(err)
			}
		}
		if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewTagReferenceName(name), target)); err != nil {
			f.t.Fatal(err)
		}
		t, _ := f.tagJSON(p, name)
		writeJSON(w, http.StatusCreated, t)
	})
	project("GET /projects/{id}/repository/branches", func(w http.ResponseWriter, r *http.Request, p *fProject) {
		repo := f.git(p)
		def := ""
		if head, err := repo.Reference(plumbing.HEAD, false); err == nil {
			def = head.Target().Short()
		}
		var names []string
		bs, _ := repo.Branches()
		bs.ForEach(func(rf *plumbing.Reference) error {
			names = append(names, rf.Name().Short())
			return nil
		})
		sort.Strings(names)
		var items []any
		for _, n := range names {
			c, err := resolve(repo, n)
			if err != nil {
				continue
			}
			items = append(items, map[string]any{"name": n, "commit": commitJSON(c), "merged": false, "protected": n == def, "default": n == def, "can_push": true})
		}
		f.page(w, r, items)
	})
}

// tagJSON is a tag as GitLab lists it, with its peeled commit.
func (f *Server) tagJSON(p *fProject, name string) (map[string]any, bool) {
	repo := f.git(p)
	rf, err := repo.Reference(plumbing.NewTagReferenceName(name), true)
	if err != nil {
		return nil, false
	}
	c, err := resolve(repo, name)
	if err != nil {
		return nil, false
	}
	msg := ""
	if t, err := repo.TagObject(rf.Hash()); err == nil {
		msg = t.Message
	}
	return map[string]any{"name": name, "message": msg, "target": rf.Hash().String(), "commit": commitJSON(c), "protected": false, "release": nil}, true
}
