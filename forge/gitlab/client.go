package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitrepo"
	"github.com/kptbot/kptbot/forge/ratelimit"
)

// DefaultBaseURL is GitLab.com's API root.
const DefaultBaseURL = "https://gitlab.com/api/v4"

// DefaultLimits pace one identity's writes. GitLab has no secondary limits
// like GitHub's, only per-endpoint rate limits answered with 429 and
// Retry-After; the per-minute cap keeps a large fan-out from bursting into
// those (GitLab.com allows 300 note creations a minute per user).
var DefaultLimits = ratelimit.Limits{PerMinute: 300}

// Client is the GitLab adapter: every forge role over GitLab's REST API
// (through client-go), with branch content moving over git. Projects are
// addressed by their full path (group/subgroup/project), or by ID when a
// Repo has no path.
type Client struct {
	gl    *gl.Client
	hook  *hookTransport // where Instrument wraps the transport
	token string         // for git over HTTPS; never logged
	clock ratelimit.Clock
	// Author signs the commits PushFiles makes.
	Author object.Signature
	// Scheduler is this identity's write scheduler: every request that is
	// not a GET or HEAD goes through it.
	Scheduler *ratelimit.Scheduler
	// TriggerToken returns the pipeline trigger token configured for a
	// project (by full path), if any; Dispatch uses it when present.
	TriggerToken func(project string) (string, bool)

	mu       sync.Mutex
	projects map[string]*gl.Project // by path or ID, for clone URLs and default branches
}

// Option configures NewClient.
type Option func(*options)

type options struct {
	limits ratelimit.Limits
	clock  ratelimit.Clock
}

// WithLimits replaces DefaultLimits for this identity.
func WithLimits(l ratelimit.Limits) Option { return func(o *options) { o.limits = l } }

// WithClock replaces real time in the write scheduler and in rate-limit
// retry times (tests).
func WithClock(c ratelimit.Clock) Option { return func(o *options) { o.clock = c } }

// NewClient returns an adapter acting as the identity of token (a project,
// group or bot-user access token, or a personal one), sent as the
// PRIVATE-TOKEN header and, for git, as the password of user oauth2.
// httpClient may be nil; baseURL is the API root, empty for GitLab.com,
// or a self-managed instance such as https://gitlab.example.com/api/v4
// (a path prefix like https://example.com/gitlab/api/v4 is kept).
func NewClient(httpClient *http.Client, baseURL, token string, opts ...Option) (*Client, error) {
	if strings.TrimSpace(token) == "" {
		return nil, errors.New("GitLab token is empty")
	}
	o := options{limits: DefaultLimits}
	for _, opt := range opts {
		opt(&o)
	}
	if o.clock == nil {
		o.clock = ratelimit.WallClock{}
	}
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	sched := ratelimit.New(o.limits, o.clock)
	hc := &http.Client{}
	if httpClient != nil {
		*hc = *httpClient
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	// client-go copies the HTTP client, so requests leave through a hook
	// that Instrument can wrap later.
	// Writes go through the identity's scheduler: a 429 pauses it until
	// GitLab's Retry-After / RateLimit-Reset, 5xx answers are retried.
	hook := &hookTransport{next: ratelimit.Transport(next, sched, func(r *http.Response) error { return classify(r, o.clock.Now()) })}
	hc.Transport = hook
	c, err := gl.NewClient(token,
		gl.WithBaseURL(baseURL),
		gl.WithHTTPClient(hc),
		// Reads are retried on 5xx here; writes are retried by the
		// scheduler, and a 429 reaches the caller as a RateLimitError.
		gl.WithCustomRetry(retryReads),
		gl.WithCustomRetryMax(2),
	)
	if err != nil {
		return nil, fmt.Errorf("GitLab API base URL %q: %w", baseURL, err)
	}
	return &Client{
		gl: c, hook: hook, token: token, clock: o.clock, Scheduler: sched,
		Author:   object.Signature{Name: "kptbot", Email: "kptbot@noreply.gitlab.com"},
		projects: map[string]*gl.Project{},
	}, nil
}

// BaseURL is the API root requests go to.
func (c *Client) BaseURL() string { return c.gl.BaseURL().String() }

// pid is how client-go names a project: its full path (escaped by
// client-go, so subgroups work), else its numeric ID.
func pid(r forge.Repo) (any, error) {
	name := strings.Trim(r.FullName, "/")
	switch {
	case name != "" && strings.Contains(name, "/") && !strings.Contains(name, "//"):
		return name, nil
	case name == "" && r.ID > 0:
		return r.ID, nil
	default:
		return nil, fmt.Errorf("GitLab project %q: want a full path group/[subgroup/]project or a project ID", r.FullName)
	}
}

func projectKey(id any) string { return fmt.Sprint(id) }

// ctxOpt passes ctx to a client-go call.
func ctxOpt(ctx context.Context) gl.RequestOptionFunc { return gl.WithContext(ctx) }

// apiError turns a client-go error into the forge sentinels, keeping the
// operation and GitLab's message.
func (c *Client) apiError(op string, err error) error {
	if errors.Is(err, gl.ErrNotFound) {
		return fmt.Errorf("%s: %w", op, forge.ErrNotFound)
	}
	var er *gl.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		switch er.Response.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("%s: %w: %s", op, forge.ErrPermission, er.Message)
		case http.StatusConflict:
			return fmt.Errorf("%s: %w: %s", op, forge.ErrConflict, er.Message)
		case http.StatusTooManyRequests:
			return fmt.Errorf("%s: %w", op, &forge.RateLimitError{RetryAt: retryAt(er.Response.Header, c.clock.Now()), Reason: "GitLab rate limit"})
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// rejected reports GitLab's answer with one of statuses whose message
// contains every one of texts (client-go flattens JSON messages such as
// {"message":{"source_branch":["does not exist"]}} into one string).
func rejected(err error, statuses []int, texts ...string) (*gl.ErrorResponse, bool) {
	var er *gl.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return nil, false
	}
	ok := false
	for _, s := range statuses {
		ok = ok || er.Response.StatusCode == s
	}
	for _, t := range texts {
		ok = ok && strings.Contains(er.Message, t)
	}
	return er, ok
}

// collect reads every page of a list, following X-Next-Page (offset
// pagination) or the Link header's next (keyset pagination).
func collect[T any](f func(page gl.RequestOptionFunc) ([]T, *gl.Response, error)) ([]T, error) {
	return gl.ScanAndCollect(func(p gl.PaginationOptionFunc) ([]T, *gl.Response, error) { return f(p) })
}

var perPage = gl.ListOptions{PerPage: 100}

// project returns the project's API view (clone URL, default branch),
// asked once per client.
func (c *Client) project(ctx context.Context, r forge.Repo) (*gl.Project, error) {
	id, err := pid(r)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	p, ok := c.projects[projectKey(id)]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, _, err = c.gl.Projects.GetProject(id, nil, ctxOpt(ctx))
	if err != nil {
		return nil, c.apiError("reading project "+projectKey(id), err)
	}
	c.mu.Lock()
	c.projects[projectKey(id)] = p
	c.mu.Unlock()
	return p, nil
}

// remote is the project's git remote with the token. Its URL is always
// the API's http_url_to_repo (asked once per project and client), never
// Repo.CloneURL: that field may come from a webhook payload, and one
// shared webhook token vouches for every project, so a payload could
// otherwise choose the server the bot's token is sent to.
func (c *Client) remote(ctx context.Context, r forge.Repo) (gitrepo.Remote, error) {
	p, err := c.project(ctx, r)
	if err != nil {
		return gitrepo.Remote{}, err
	}
	if p.HTTPURLToRepo == "" {
		return gitrepo.Remote{}, fmt.Errorf("project %s: GitLab gave no http_url_to_repo", r.FullName)
	}
	return gitrepo.Remote{URL: p.HTTPURLToRepo, Auth: c.gitAuth()}, nil
}

// gitAuth is how GitLab takes a token over git HTTPS: any user name (by
// convention oauth2) with the token as password.
func (c *Client) gitAuth() transport.AuthMethod {
	return &githttp.BasicAuth{Username: "oauth2", Password: c.token}
}

// ReadFile implements forge.FileReader with the raw file API.
func (c *Client) ReadFile(ctx context.Context, r forge.Repo, ref, path string) ([]byte, error) {
	id, err := pid(r)
	if err != nil {
		return nil, err
	}
	opt := &gl.GetRawFileOptions{}
	if ref != "" {
		opt.Ref = gl.Ptr(ref) // else the default branch
	}
	b, _, err := c.gl.RepositoryFiles.GetRawFile(id, strings.TrimPrefix(path, "/"), opt, ctxOpt(ctx))
	if err != nil {
		return nil, c.apiError(fmt.Sprintf("reading %s at %s in %s", path, ref, r.FullName), err)
	}
	return b, nil
}

// ListTree implements forge.FileReader with the recursive repository tree,
// page by page. GitLab answers 404 both for a missing ref and (on some
// versions) a missing directory; only the first is ErrNotFound.
func (c *Client) ListTree(ctx context.Context, r forge.Repo, ref, dir string) ([]string, error) {
	id, err := pid(r)
	if err != nil {
		return nil, err
	}
	op := fmt.Sprintf("listing %s at %s in %s", dir, ref, r.FullName)
	dir = strings.Trim(dir, "/")
	opt := &gl.ListTreeOptions{ListOptions: perPage, Recursive: gl.Ptr(true)}
	if ref != "" {
		opt.Ref = gl.Ptr(ref) // else the default branch
	}
	if dir != "" {
		opt.Path = gl.Ptr(dir)
	}
	nodes, err := collect(func(p gl.RequestOptionFunc) ([]*gl.TreeNode, *gl.Response, error) {
		return c.gl.Repositories.ListTree(id, opt, ctxOpt(ctx), p)
	})
	if errors.Is(err, gl.ErrNotFound) && dir != "" {
		if _, _, cerr := c.gl.Commits.GetCommit(id, ref, nil, ctxOpt(ctx)); cerr == nil {
			return nil, nil // the ref exists; the directory does not
		}
	}
	if err != nil {
		return nil, c.apiError(op, err)
	}
	var out []string
	for _, n := range nodes {
		if n.Type == "blob" {
			out = append(out, n.Path)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ReadTree implements forge.TreeReader over git (one fetch, not one
// request per file), with the token as credentials.
func (c *Client) ReadTree(ctx context.Context, r forge.Repo, ref, dir string) (forge.Snapshot, error) {
	rem, err := c.remote(ctx, r)
	if err != nil {
		return forge.Snapshot{}, err
	}
	snap, err := rem.ReadTree(ctx, ref, dir)
	if err != nil {
		return forge.Snapshot{}, fmt.Errorf("reading %s at %s in %s: %w", dir, ref, r.FullName, err)
	}
	return snap, nil
}

// ListTags implements forge.RefLister; GitLab gives each tag's peeled
// commit, so annotated tags cost no extra request.
func (c *Client) ListTags(ctx context.Context, r forge.Repo) ([]forge.Tag, error) {
	id, err := pid(r)
	if err != nil {
		return nil, err
	}
	tags, err := collect(func(p gl.RequestOptionFunc) ([]*gl.Tag, *gl.Response, error) {
		return c.gl.Tags.ListTags(id, &gl.ListTagsOptions{ListOptions: perPage}, ctxOpt(ctx), p)
	})
	if err != nil {
		return nil, c.apiError("listing tags of "+r.FullName, err)
	}
	out := make([]forge.Tag, 0, len(tags))
	for _, t := range tags {
		if t.Commit != nil {
			out = append(out, forge.Tag{Name: t.Name, SHA: t.Commit.ID})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ListBranches implements forge.RefLister.
func (c *Client) ListBranches(ctx context.Context, r forge.Repo) ([]forge.Branch, error) {
	id, err := pid(r)
	if err != nil {
		return nil, err
	}
	bs, err := collect(func(p gl.RequestOptionFunc) ([]*gl.Branch, *gl.Response, error) {
		return c.gl.Branches.ListBranches(id, &gl.ListBranchesOptions{ListOptions: perPage}, ctxOpt(ctx), p)
	})
	if err != nil {
		return nil, c.apiError("listing branches of "+r.FullName, err)
	}
	out := make([]forge.Branch, 0, len(bs))
	for _, b := range bs {
		if b.Commit != nil {
			out = append(out, forge.Branch{Name: b.Name, SHA: b.Commit.ID})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ListRepos implements forge.RepoLister: the unarchived projects the
// token's user is a member of (GitLab has no installations).
func (c *Client) ListRepos(ctx context.Context) ([]forge.Repo, error) {
	opt := &gl.ListProjectsOptions{ListOptions: perPage, Membership: gl.Ptr(true), Archived: gl.Ptr(false)}
	ps, err := collect(func(p gl.RequestOptionFunc) ([]*gl.Project, *gl.Response, error) {
		return c.gl.Projects.ListProjects(opt, ctxOpt(ctx), p)
	})
	if err != nil {
		return nil, c.apiError("listing the token's projects", err)
	}
	out := make([]forge.Repo, 0, len(ps))
	for _, p := range ps {
		out = append(out, repoOf(p))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FullName < out[j].FullName })
	return out, nil
}

func repoOf(p *gl.Project) forge.Repo {
	return forge.Repo{
		Forge: forge.GitLab, FullName: p.PathWithNamespace, ID: p.ID, CloneURL: p.HTTPURLToRepo,
		DefaultBranch: p.DefaultBranch, Topics: p.Topics, Private: p.Visibility != gl.PublicVisibility,
	}
}

// Every role forge.Compose looks for, checked at compile time.
var (
	_ forge.FileReader    = (*Client)(nil)
	_ forge.TreeReader    = (*Client)(nil)
	_ forge.CommitLogger  = (*Client)(nil)
	_ forge.RefLister     = (*Client)(nil)
	_ forge.Pusher        = (*Client)(nil)
	_ forge.ChangeReader  = (*Client)(nil)
	_ forge.ChangeWriter  = (*Client)(nil)
	_ forge.Tagger        = (*Client)(nil)
	_ forge.Commenter     = (*Client)(nil)
	_ forge.Issues        = (*Client)(nil)
	_ forge.Teams         = (*Client)(nil)
	_ forge.Permissions   = (*Client)(nil)
	_ forge.Checks        = (*Client)(nil)
	_ forge.Dispatcher    = (*Client)(nil)
	_ forge.RepoLister    = (*Client)(nil)
	_ forge.CommentReader = (*Client)(nil)
)

// Log implements forge.CommitLogger over git (one fetch, no REST calls).
func (c *Client) Log(ctx context.Context, r forge.Repo, from, to string) ([]forge.Commit, error) {
	rm, err := c.remote(ctx, r)
	if err != nil {
		return nil, err
	}
	return rm.Log(ctx, from, to)
}
