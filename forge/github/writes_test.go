package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

// writeServer is a fake GitHub for the write calls: it keeps pull request
// 8's state, tag refs and what was posted, answers with GitHub's JSON and
// errors, and checks every REST request against the OpenAPI description.
type writeServer struct {
	mu       sync.Mutex
	draft    bool
	state    string
	title    string
	labels   []string
	refs     map[string]string // tag ref → tag object SHA
	tagObjs  map[string]string // tag object SHA → commit SHA
	posted   []string
	graphqls []string
}

func newWriteServer(t *testing.T) (*Client, *writeServer) {
	t.Helper()
	ws := &writeServer{draft: true, state: "open", title: "Update basens to v2",
		refs: map[string]string{"refs/tags/basens/v1": "tagobj1"}, tagObjs: map[string]string{"tagobj1": shaTag1}}
	mux := http.NewServeMux()
	pr := func(w http.ResponseWriter) {
		labels := make([]map[string]string, len(ws.labels))
		for i, l := range ws.labels {
			labels[i] = map[string]string{"name": l}
		}
		b, _ := json.Marshal(labels)
		fmt.Fprintf(w, `{"number":8,"node_id":"PR_kwDO8","state":%q,"title":%q,"body":"b","draft":%v,"labels":%s,
			"user":{"login":"kptbot[bot]","id":9,"type":"Bot"},
			"head":{"ref":"kptbot/x","sha":%q,"repo":{"full_name":"acme/site-a"}},
			"base":{"ref":"main","sha":%q,"repo":{"full_name":"acme/site-a"}}}`, ws.state, ws.title, ws.draft, b, shaHead, shaMain)
	}
	validation := func(w http.ResponseWriter, msg string) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprintf(w, `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":%q}],"documentation_url":"https://docs.github.com/rest"}`, msg)
	}
	decode := func(r *http.Request) map[string]any {
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			t.Errorf("%s %s: body is not JSON: %v", r.Method, r.URL.Path, err)
		}
		return m
	}
	handle := func(pattern string, h func(w http.ResponseWriter, r *http.Request)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			ws.mu.Lock()
			defer ws.mu.Unlock()
			ws.posted = append(ws.posted, r.Method+" "+r.URL.Path)
			w.Header().Set("Content-Type", "application/json")
			h(w, r)
		})
	}
	handle("POST /repos/acme/site-a/pulls", func(w http.ResponseWriter, r *http.Request) {
		if m := decode(r); m["head"] == "dup" {
			validation(w, "A pull request already exists for acme:dup.")
			return
		}
		w.WriteHeader(http.StatusCreated)
		pr(w)
	})
	handle("GET /repos/acme/site-a/pulls/8", func(w http.ResponseWriter, r *http.Request) { pr(w) })
	handle("PATCH /repos/acme/site-a/pulls/8", func(w http.ResponseWriter, r *http.Request) {
		m := decode(r)
		if s, ok := m["state"].(string); ok {
			ws.state = s
		}
		if s, ok := m["title"].(string); ok {
			ws.title = s
		}
		pr(w)
	})
	handle("PUT /repos/acme/site-a/issues/8/labels", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Labels []string }
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("labels body %s: %v", b, err)
		}
		ws.labels = body.Labels
		out, _ := json.Marshal(func() []map[string]string {
			var o []map[string]string
			for _, l := range body.Labels {
				o = append(o, map[string]string{"name": l})
			}
			return o
		}())
		w.Write(out)
	})
	handle("POST /graphql", func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			Query     string         `json:"query"`
			Variables map[string]any `json:"variables"`
		}
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil || q.Variables["id"] != "PR_kwDO8" {
			t.Errorf("GraphQL request %+v, %v: want the pull request's node id", q, err)
		}
		ws.graphqls = append(ws.graphqls, q.Query)
		ws.draft = strings.Contains(q.Query, "convertPullRequestToDraft")
		fmt.Fprintf(w, `{"data":{"x":{"pullRequest":{"isDraft":%v}}}}`, ws.draft)
	})
	handle("PUT /repos/acme/site-a/pulls/{n}/merge", func(w http.ResponseWriter, r *http.Request) {
		m := decode(r)
		switch {
		case r.PathValue("n") == "9":
			w.WriteHeader(http.StatusMethodNotAllowed)
			fmt.Fprint(w, `{"message":"Pull Request is not mergeable","documentation_url":"https://docs.github.com/rest"}`)
		case m["sha"] != shaHead:
			w.WriteHeader(http.StatusConflict)
			fmt.Fprint(w, `{"message":"Head branch was modified. Review and try the merge again.","documentation_url":"https://docs.github.com/rest"}`)
		default:
			ws.state = "closed"
			fmt.Fprintf(w, `{"sha":%q,"merged":true,"message":"Pull Request successfully merged"}`, shaMain)
		}
	})
	handle("POST /repos/acme/up/git/tags", func(w http.ResponseWriter, r *http.Request) {
		m := decode(r)
		obj := "tagobj-" + strings.ReplaceAll(m["tag"].(string), "/", "-")
		ws.tagObjs[obj] = m["object"].(string)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"sha":%q,"tag":%q,"message":"m","object":{"type":"commit","sha":%q,"url":"u"},"node_id":"n","url":"u","verification":{"verified":false,"reason":"unsigned","signature":null,"payload":null}}`, obj, m["tag"], m["object"])
	})
	handle("POST /repos/acme/up/git/refs", func(w http.ResponseWriter, r *http.Request) {
		m := decode(r)
		ref := m["ref"].(string)
		if _, ok := ws.refs[ref]; ok {
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `{"message":"Reference already exists","documentation_url":"https://docs.github.com/rest/git/refs#create-a-reference"}`)
			return
		}
		ws.refs[ref] = m["sha"].(string)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"ref":%q,"node_id":"n","url":"u","object":{"type":"tag","sha":%q,"url":"u"}}`, ref, m["sha"])
	})
	handle("GET /repos/acme/up/git/ref/{ref...}", func(w http.ResponseWriter, r *http.Request) {
		ref := "refs/" + r.PathValue("ref")
		fmt.Fprintf(w, `{"ref":%q,"node_id":"n","url":"u","object":{"type":"tag","sha":%q,"url":"u"}}`, ref, ws.refs[ref])
	})
	handle("GET /repos/acme/up/git/tags/{sha}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"sha":%q,"tag":"t","message":"m","object":{"type":"commit","sha":%q,"url":"u"},"node_id":"n","url":"u"}`, r.PathValue("sha"), ws.tagObjs[r.PathValue("sha")])
	})
	handle("POST /repos/acme/site-a/issues/8/comments", func(w http.ResponseWriter, r *http.Request) {
		m := decode(r)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":501,"body":%q,"user":{"login":"kptbot[bot]","id":9,"type":"Bot"}}`, m["body"])
	})
	handle("PATCH /repos/acme/site-a/issues/comments/501", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"id":501,"body":%q}`, decode(r)["body"])
	})
	handle("POST /repos/acme/site-a/issues/comments/501/reactions", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":1,"content":%q}`, decode(r)["content"])
	})
	handle("POST /repos/acme/site-a/check-runs", func(w http.ResponseWriter, r *http.Request) {
		if m := decode(r); m["head_sha"] != shaHead {
			validation(w, "No commit found for SHA: "+fmt.Sprint(m["head_sha"]))
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"id":77,"name":"kptbot/render","status":"completed","conclusion":"success"}`)
	})
	handle("POST /repos/acme/site-a/dispatches", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(loadAPIContract(t).Middleware(t, mux))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c, ws
}

func TestClientWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, ws := newWriteServer(t)
	site := forge.Repo{FullName: "acme/site-a"}
	up := forge.Repo{FullName: "acme/up"}

	ch, err := c.OpenChange(ctx, site, forge.ChangeSpec{Head: "kptbot/x", Base: "main", Title: "Update basens to v2", Draft: true, Labels: []string{"kptbot"}})
	if err != nil || ch.Number != 8 || !ch.Draft || len(ch.Labels) != 1 {
		t.Fatalf("OpenChange = %+v, %v", ch, err)
	}
	if _, err := c.OpenChange(ctx, site, forge.ChangeSpec{Head: "dup", Base: "main", Title: "t"}); !errors.Is(err, forge.ErrConflict) {
		t.Errorf("OpenChange for a head with an open PR: error = %v, want ErrConflict", err)
	}
	title, ready := "Update basens to v3", false
	ch, err = c.UpdateChange(ctx, site, 8, forge.ChangeUpdate{Title: &title, Draft: &ready, Labels: []string{"kptbot", "basens"}})
	if err != nil || ch.Title != title || ch.Draft || len(ch.Labels) != 2 {
		t.Fatalf("UpdateChange = %+v, %v", ch, err)
	}
	if len(ws.graphqls) != 1 || !strings.Contains(ws.graphqls[0], "markPullRequestReadyForReview") {
		t.Errorf("GraphQL calls %v, want one markPullRequestReadyForReview", ws.graphqls)
	}
	if _, err := c.UpdateChange(ctx, site, 8, forge.ChangeUpdate{Draft: &ready}); err != nil || len(ws.graphqls) != 1 {
		t.Errorf("UpdateChange to the state it has: %v, GraphQL calls %d (want no new call)", err, len(ws.graphqls))
	}

	if _, err := c.Merge(ctx, site, 8, shaTag1, "squash"); !errors.Is(err, forge.ErrConflict) {
		t.Errorf("Merge with a stale head: error = %v, want ErrConflict", err)
	}
	if _, err := c.Merge(ctx, site, 9, shaHead, "merge"); !errors.Is(err, forge.ErrNotMergeable) {
		t.Errorf("Merge of an unmergeable PR: error = %v, want ErrNotMergeable", err)
	}
	if _, err := c.Merge(ctx, site, 8, "", "merge"); err == nil {
		t.Error("Merge without the approved SHA succeeded")
	}
	if sha, err := c.Merge(ctx, site, 8, shaHead, "merge"); err != nil || sha != shaMain {
		t.Errorf("Merge = %s, %v; want %s", sha, err, shaMain)
	}

	if err := c.CreateTag(ctx, up, "basens/v2", shaTag2, "basens v2"); err != nil {
		t.Fatalf("CreateTag: %v", err)
	}
	if err := c.CreateTag(ctx, up, "basens/v2", shaTag2, "basens v2"); err != nil {
		t.Errorf("CreateTag retried at the same commit: %v, want success", err)
	}
	if err := c.CreateTag(ctx, up, "basens/v1", shaTag2, "moved"); !errors.Is(err, forge.ErrConflict) {
		t.Errorf("CreateTag over a published tag: error = %v, want ErrConflict", err)
	}
	if ws.refs["refs/tags/basens/v1"] != "tagobj1" {
		t.Errorf("published tag moved to %s", ws.refs["refs/tags/basens/v1"])
	}

	cm, err := c.Comment(ctx, site, 8, "rendered")
	if err != nil || cm.ID != 501 || !cm.Author.Bot {
		t.Fatalf("Comment = %+v, %v", cm, err)
	}
	if err := c.EditComment(ctx, site, 7, 501, "rendered again"); err != nil {
		t.Errorf("EditComment: %v", err)
	}
	if err := c.React(ctx, site, 7, 501, "rocket"); err != nil {
		t.Errorf("React: %v", err)
	}
	rep := forge.CheckReport{Name: "kptbot/render", HeadSHA: shaHead, Status: forge.CheckCompleted, Conclusion: forge.CheckSuccess, Title: "ok", Summary: "3 packages rendered"}
	if err := c.ReportCheck(ctx, site, rep); err != nil {
		t.Errorf("ReportCheck: %v", err)
	}
	rep.HeadSHA = shaTag1
	if err := c.ReportCheck(ctx, site, rep); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("ReportCheck on an unknown commit: error = %v, want ErrNotFound", err)
	}
	if err := c.Dispatch(ctx, site, "kptbot-upstream-tag", map[string]any{"tag": "basens/v2"}); err != nil {
		t.Errorf("Dispatch: %v", err)
	}
	if err := c.CloseChange(ctx, site, 8); err != nil || ws.state != "closed" {
		t.Errorf("CloseChange: %v, state %s", err, ws.state)
	}
}

// TestClientPushFilesOverGit pushes through git's smart HTTP protocol (git
// http-backend), as the adapter does against github.com with the
// installation token.
func TestClientPushFilesOverGit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	bare := filepath.Join(root, "acme", "site-a.git")
	gitfixture.Git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	gitfixture.Git(t, bare, "config", "http.receivepack", "true")
	wt := gitfixture.WorkTree(t, bare)
	gitfixture.Git(t, wt, "symbolic-ref", "HEAD", "refs/heads/main")
	gitfixture.WriteFiles(t, wt, map[string]string{"sites/a/cm.yaml": "a: 1\n"})
	gitfixture.CommitAndTag(t, wt, "init", "")
	srv := gitfixture.HTTPServer(t, root)

	c, err := NewClient(http.DefaultClient, "")
	if err != nil {
		t.Fatal(err)
	}
	c.GitURL = srv.URL + "/"
	calls := 0
	c.GitAuth = func(context.Context) (transport.AuthMethod, error) {
		calls++
		return &githttp.BasicAuth{Username: "x-access-token", Password: "ghs_test"}, nil
	}
	site := forge.Repo{FullName: "acme/site-a", CloneURL: srv.URL + "/acme/site-a.git"}
	ctx := context.Background()
	sha, err := c.PushFiles(ctx, site, "kptbot/x", "", "main", map[string][]byte{"sites/a/cm.yaml": []byte("a: 2\n")}, "Update")
	if err != nil {
		t.Fatalf("PushFiles: %v", err)
	}
	if got := gitfixture.Git(t, bare, "rev-parse", "kptbot/x"); got != sha || calls != 1 {
		t.Errorf("branch at %s (want %s), GitAuth called %d times", got, sha, calls)
	}
	if _, err := c.PushFiles(ctx, site, "kptbot/x", "", "main", nil, "again"); !errors.Is(err, forge.ErrConflict) {
		t.Errorf("second create: error = %v, want ErrConflict", err)
	}
	if _, err := c.PushFiles(ctx, forge.Repo{FullName: "site-a"}, "kptbot/y", "", "main", nil, "m"); err == nil || !strings.Contains(err.Error(), "owner/name") {
		t.Errorf("push to a malformed repository name: error = %v", err)
	}
	ghe, err := NewClient(http.DefaultClient, "https://ghe.example.com/api/v3/")
	if err != nil || ghe.GitURL != "https://ghe.example.com/" {
		t.Errorf("GitHub Enterprise Server git URL = %q, %v; want https://ghe.example.com/", ghe.GitURL, err)
	}
}
