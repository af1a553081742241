package githubtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

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

func (f *Server) seed(r forge.Repo, branch string, files map[string][]byte) string {
	f.newRepo(r.FullName)
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

// contentRoutes serve a repository and what its refs hold through the
// REST API: file contents, trees, tags and branches.
func (f *Server) contentRoutes(route routeFunc) {
	route("GET /repos/{owner}/{repo}", func(w http.ResponseWriter, r *http.Request, _ *git.Repository, name string) {
		writeJSON(w, http.StatusOK, f.repoJSON(name))
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
	route("GET /repos/{owner}/{repo}/branches", func(w http.ResponseWriter, r *http.Request, repo *git.Repository, name string) {
		out := []map[string]any{}
		bs, _ := repo.Branches()
		bs.ForEach(func(rf *plumbing.Reference) error {
			b := map[string]any{"name": rf.Name().Short(), "commit": map[string]string{"sha": rf.Hash().String(), "url": "u"}, "protected": false}
			if req, ok := f.required[name+"\x00"+rf.Name().Short()]; ok {
				// GitHub's listing shows a protected branch's required checks.
				checks := []map[string]any{}
				for _, c := range req {
					checks = append(checks, map[string]any{"context": c, "app_id": nil})
				}
				b["protected"] = true
				b["protection"] = map[string]any{"enabled": true, "required_status_checks": map[string]any{"enforcement_level": "non_admins", "contexts": req, "checks": checks}}
			}
			if r.URL.Query().Get("protected") != "true" || b["protected"] == true {
				out = append(out, b)
			}
			return nil
		})
		writeJSON(w, http.StatusOK, out)
	})
}
