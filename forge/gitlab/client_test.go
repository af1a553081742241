package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
	"github.com/kptbot/kptbot/forge/ratelimit"
)

// testClock is a ratelimit.Clock whose Sleep advances time at once.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

func TestSubgroupProjectPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c := newFakeGitLab(t, "/api/v4")
	repo := forge.Repo{FullName: "acme/infra/edge.sites"}
	base := f.Seed(repo, "main", map[string][]byte{"sites/a/Kptfile": []byte("k\n")})
	if got, err := c.ReadFile(ctx, repo, "main", "sites/a/Kptfile"); err != nil || string(got) != "k\n" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	snap, err := c.ReadTree(ctx, repo, "main", "sites")
	if err != nil || snap.Commit != base || string(snap.Files["a/Kptfile"]) != "k\n" {
		t.Fatalf("ReadTree = %+v, %v", snap, err)
	}
	if _, err := c.PushFiles(ctx, repo, "kptbot/x", "", base, map[string][]byte{"b.yaml": []byte("b\n")}, "x"); err != nil {
		t.Fatal(err)
	}
	ch, err := c.OpenChange(ctx, repo, forge.ChangeSpec{Head: "kptbot/x", Base: "main", Title: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Merge(ctx, repo, ch.Number, ch.HeadSHA, "merge"); err != nil {
		t.Fatal(err)
	}
	repos, err := c.ListRepos(ctx)
	if err != nil || len(repos) != 1 || repos[0].FullName != repo.FullName || repos[0].DefaultBranch != "main" ||
		repos[0].CloneURL != f.CloneURL(repo) || repos[0].Forge != forge.GitLab {
		t.Errorf("ListRepos = %+v, %v; want the subgroup project with its API clone URL", repos, err)
	}
	for _, want := range []string{
		"GET /projects/acme%2Finfra%2Fedge%2Esites/repository/files/sites%2Fa%2FKptfile/raw",
		"PUT /projects/acme%2Finfra%2Fedge%2Esites/merge_requests/1/merge",
	} {
		if !hasRequest(f.Requests(), want) {
			t.Errorf("no request %s in %v", want, f.Requests())
		}
	}
}

func hasRequest(log []string, want string) bool {
	for _, r := range log {
		if r == want {
			return true
		}
	}
	return false
}

func TestSelfIsTheTokensUser(t *testing.T) {
	t.Parallel()
	_, c := newFakeGitLab(t, "/api/v4")
	me, err := c.Self(context.Background())
	if err != nil || me.Login != gitlabtest.BotUsername || !me.Bot || me.ID == 0 {
		t.Errorf("Self = %+v, %v; want the bot user %s", me, err, gitlabtest.BotUsername)
	}
	bad, err := NewClient(nil, c.BaseURL(), "wrong-token")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Self(context.Background()); !errors.Is(err, forge.ErrPermission) {
		t.Errorf("Self with a wrong token: %v, want ErrPermission", err)
	}
}

func TestPaginationAcrossPages(t *testing.T) {
	t.Parallel()
	for _, noLink := range []bool{false, true} {
		t.Run(fmt.Sprintf("noLink=%v", noLink), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f, c := newFakeGitLab(t, "/api/v4")
			f.SetPaging(2, !noLink)
			repo := forge.Repo{FullName: "acme/site-a"}
			sha := f.Seed(repo, "main", map[string][]byte{"a": []byte("a")})
			for i := 1; i <= 5; i++ {
				if err := c.CreateTag(ctx, repo, fmt.Sprintf("pkg/v%d", i), sha, "v"); err != nil {
					t.Fatal(err)
				}
			}
			tags, err := c.ListTags(ctx, repo)
			if err != nil || len(tags) != 5 || tags[0].Name != "pkg/v1" || tags[4] != (forge.Tag{Name: "pkg/v5", SHA: sha}) {
				t.Fatalf("ListTags = %v, %v; want 5 tags over 3 pages", tags, err)
			}
			pages := 0
			for _, r := range f.Requests() {
				if strings.HasPrefix(r, "GET /projects/acme%2Fsite-a/repository/tags") {
					pages++
				}
			}
			if pages != 3 {
				t.Errorf("%d tag list requests, want 3 (pages of 2)", pages)
			}
		})
	}
}

func TestListTreeMissingDirectoryIsEmpty(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c := newFakeGitLab(t, "/api/v4")
	repo := forge.Repo{FullName: "acme/site-a"}
	f.Seed(repo, "main", map[string][]byte{"a/b": []byte("x")})
	// The fake answers a missing path with 404, as older GitLab does.
	if got, err := c.ListTree(ctx, repo, "main", "nothing"); err != nil || len(got) != 0 {
		t.Errorf("ListTree(missing dir) = %v, %v; want empty, no error", got, err)
	}
	if _, err := c.ListTree(ctx, repo, "nope", "nothing"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("ListTree(missing ref, missing dir) error = %v, want ErrNotFound", err)
	}
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "https://gitlab.com/api/v4/"},
		{"https://gitlab.example.com/api/v4", "https://gitlab.example.com/api/v4/"},
		{"https://example.com/gitlab/api/v4/", "https://example.com/gitlab/api/v4/"},
		{"https://example.com/gitlab", "https://example.com/gitlab/api/v4/"},
	} {
		c, err := NewClient(nil, tc.in, "t")
		if err != nil || c.BaseURL() != tc.want {
			t.Errorf("NewClient(%q).BaseURL() = %v, %v; want %s", tc.in, c.BaseURL(), err, tc.want)
		}
	}
	if _, err := NewClient(nil, "", " "); err == nil {
		t.Error("NewClient with an empty token succeeded")
	}
}

func TestErrorsMapToSentinels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c := newFakeGitLab(t, "/api/v4")
	f.Seed(forge.Repo{FullName: "acme/site-a"}, "main", map[string][]byte{"a": []byte("a")})
	if _, err := c.ListBranches(ctx, forge.Repo{FullName: "acme/missing"}); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("missing project: %v, want ErrNotFound", err)
	}
	if _, err := c.ListBranches(ctx, forge.Repo{FullName: "no-namespace"}); err == nil || !strings.Contains(err.Error(), "group/[subgroup/]project") {
		t.Errorf("project without namespace: %v, want a naming error", err)
	}
	bad, err := NewClient(nil, c.BaseURL(), "wrong-token")
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.ListBranches(ctx, forge.Repo{FullName: "acme/site-a"})
	if !errors.Is(err, forge.ErrPermission) || strings.Contains(err.Error(), "wrong-token") {
		t.Errorf("wrong token: %v, want ErrPermission without the token", err)
	}
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := &testClock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	f, c := newFakeGitLab(t, "/api/v4", WithClock(clock), WithLimits(ratelimit.Limits{PerMinute: 100}))
	repo := forge.Repo{FullName: "acme/site-a"}
	sha := f.Seed(repo, "main", map[string][]byte{"a": []byte("a")})
	reset := time.Date(2026, 11, 1, 12, 5, 0, 0, time.UTC)
	var mu sync.Mutex
	var limited []string // paths to answer 429 once each
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		for i, p := range limited {
			if strings.HasSuffix(r.URL.Path, p) {
				limited = append(limited[:i], limited[i+1:]...)
				if r.Method == http.MethodGet && strings.HasSuffix(p, "/branches") {
					w.Header().Set("RateLimit-Reset", fmt.Sprint(reset.Unix()))
				} else {
					w.Header().Set("Retry-After", "30")
				}
				writeJSON(w, http.StatusTooManyRequests, map[string]any{"message": "Retry later"})
				return true
			}
		}
		return false
	})
	set := func(paths ...string) {
		mu.Lock()
		limited = paths
		mu.Unlock()
	}

	set("/repository/tags")
	_, err := c.ListTags(ctx, repo)
	var rl *forge.RateLimitError
	if !errors.As(err, &rl) || !errors.Is(err, forge.ErrRateLimited) || !rl.RetryAt.Equal(clock.Now().Add(30*time.Second)) {
		t.Errorf("read answered 429 Retry-After 30: %v, want RateLimitError retrying at %s", err, clock.Now().Add(30*time.Second))
	}
	set("/repository/branches")
	if _, err := c.ListBranches(ctx, repo); !errors.As(err, &rl) || !rl.RetryAt.Equal(reset) {
		t.Errorf("read answered 429 RateLimit-Reset: %v, want RateLimitError retrying at %s", err, reset)
	}

	// A write waits out the 429 in the identity's scheduler and succeeds.
	set("/repository/tags")
	before := clock.Now()
	if err := c.CreateTag(ctx, repo, "pkg/v1", sha, "v1"); err != nil {
		t.Fatalf("CreateTag after one 429: %v", err)
	}
	if st := c.Scheduler.Stats(); st.RateLimited != 1 || st.Retries != 1 {
		t.Errorf("scheduler stats = %+v, want one rate limit and one retry", st)
	}
	if waited := clock.Now().Sub(before); waited < 30*time.Second {
		t.Errorf("the write waited %s, want at least Retry-After's 30s", waited)
	}
}
