package forgemetrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgemetrics"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/gitlab"
	"github.com/kptbot/kptbot/forge/ratelimit"
)

// TestBothForgesOnOneRegistry instruments a GitHub and a GitLab client on
// one registry: one set of names, the forge label tells them apart.
func TestBothForgesOnOneRegistry(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/api/v4/") { // GitLab
			w.Header().Set("RateLimit-Remaining", "599")
			fmt.Fprint(w, `[{"name":"main","commit":{"id":"aaaa"}}]`)
			return
		}
		w.Header().Set("X-Ratelimit-Remaining", "4999")
		fmt.Fprint(w, `[{"name":"main","commit":{"sha":"bbbb"}}]`)
	}))
	t.Cleanup(srv.Close)
	reg := prometheus.NewRegistry()
	m, err := forgemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := forgemetrics.New(reg); err == nil {
		t.Error("a second New on the same registry succeeded; want the clash reported")
	}
	gh, err := github.NewTokenClient("ghp_secret", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	gh.Instrument(m, "token")
	gl, err := gitlab.NewClient(srv.Client(), srv.URL+"/api/v4", "glpat-secret")
	if err != nil {
		t.Fatal(err)
	}
	gl.Instrument(m, "token")
	ctx := context.Background()
	repo := forge.Repo{FullName: "acme/site-a"}
	if _, err := gh.ListBranches(ctx, repo); err != nil {
		t.Fatal(err)
	}
	if _, err := gl.ListBranches(ctx, repo); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP kptbot_forge_requests_total Forge API requests by kind (read, write) and HTTP status.
# TYPE kptbot_forge_requests_total counter
kptbot_forge_requests_total{forge="github",identity="token",kind="read",status="200"} 1
kptbot_forge_requests_total{forge="gitlab",identity="token",kind="read",status="200"} 1
# HELP kptbot_forge_ratelimit_remaining Requests left in the identity's primary rate-limit window, as the forge last reported.
# TYPE kptbot_forge_ratelimit_remaining gauge
kptbot_forge_ratelimit_remaining{forge="github",identity="token"} 4999
kptbot_forge_ratelimit_remaining{forge="gitlab",identity="token"} 599
# HELP kptbot_forge_write_wait_seconds_total Time writes waited for the identity's rate-limit budget.
# TYPE kptbot_forge_write_wait_seconds_total counter
kptbot_forge_write_wait_seconds_total{forge="github",identity="token"} 0
kptbot_forge_write_wait_seconds_total{forge="gitlab",identity="token"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kptbot_forge_requests_total", "kptbot_forge_ratelimit_remaining", "kptbot_forge_write_wait_seconds_total"); err != nil {
		t.Error(err)
	}
	out, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(out); strings.Contains(s, "ghp_secret") || strings.Contains(s, "glpat-secret") {
		t.Error("a token leaked into the metrics")
	}
}

// TestWatchReportsSchedulerStats: a scheduler's waits, retries and
// rate-limit pauses appear under its forge and identity.
func TestWatchReportsSchedulerStats(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := forgemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	s := ratelimit.New(ratelimit.Limits{MaxAttempts: 3, BaseBackoff: 1, MaxBackoff: 1}, nil)
	m.Watch(forge.GitLab, "bot", s)
	m.Watch(forge.GitLab, "none", nil) // no scheduler: nothing reported
	calls := 0
	err = s.Do(context.Background(), ratelimit.Bulk, func(context.Context) error {
		if calls++; calls == 1 {
			return &ratelimit.TransientError{Err: fmt.Errorf("502")}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `
# HELP kptbot_forge_write_retries_total Writes retried after a transient error or a rate limit.
# TYPE kptbot_forge_write_retries_total counter
kptbot_forge_write_retries_total{forge="gitlab",identity="bot"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kptbot_forge_write_retries_total"); err != nil {
		t.Error(err)
	}
}

func TestPriorityIsOneKeyForEveryAdapter(t *testing.T) {
	t.Parallel()
	if got := ratelimit.PriorityFrom(context.Background()); got != ratelimit.Bulk {
		t.Errorf("PriorityFrom(no priority) = %d, want Bulk", got)
	}
	for name, ctx := range map[string]context.Context{
		"ratelimit": ratelimit.WithPriority(context.Background(), ratelimit.Interactive),
		"github":    github.WithPriority(context.Background(), ratelimit.Interactive),
		"gitlab":    gitlab.WithPriority(context.Background(), ratelimit.Interactive),
	} {
		if got := ratelimit.PriorityFrom(ctx); got != ratelimit.Interactive {
			t.Errorf("%s.WithPriority(Interactive) reads back as %d", name, got)
		}
	}
}
