package gitlab

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgemetrics"
	"github.com/kptbot/kptbot/forge/gitlab/gitlabtest"
)

func TestMetricsCountRequestsAndBudget(t *testing.T) {
	t.Parallel()
	f, c := newFakeGitLab(t, "/api/v4")
	repo := forge.Repo{FullName: "acme/site-a"}
	f.Seed(repo, "main", map[string][]byte{"a": []byte("a")})
	// GitLab sends RateLimit-Remaining where a limit applies.
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("RateLimit-Remaining", "1999")
		return false
	})
	reg := prometheus.NewRegistry()
	m, err := forgemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	c.Instrument(m, "gitlab-token")
	ctx := context.Background()
	for range 2 {
		if _, err := c.ListBranches(ctx, repo); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Comment(ctx, repo, 8, "hi"); err == nil {
		t.Fatal("a note on a missing merge request succeeded")
	}
	want := `
# HELP kptbot_forge_requests_total Forge API requests by kind (read, write) and HTTP status.
# TYPE kptbot_forge_requests_total counter
kptbot_forge_requests_total{forge="gitlab",identity="gitlab-token",kind="read",status="200"} 2
kptbot_forge_requests_total{forge="gitlab",identity="gitlab-token",kind="write",status="404"} 1
# HELP kptbot_forge_ratelimit_remaining Requests left in the identity's primary rate-limit window, as the forge last reported.
# TYPE kptbot_forge_ratelimit_remaining gauge
kptbot_forge_ratelimit_remaining{forge="gitlab",identity="gitlab-token"} 1999
# HELP kptbot_forge_write_retries_total Writes retried after a transient error or a rate limit.
# TYPE kptbot_forge_write_retries_total counter
kptbot_forge_write_retries_total{forge="gitlab",identity="gitlab-token"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kptbot_forge_requests_total", "kptbot_forge_ratelimit_remaining", "kptbot_forge_write_retries_total"); err != nil {
		t.Error(err)
	}
	out, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fmt.Sprint(out), gitlabtest.Token) {
		t.Error("the token leaked into the metrics")
	}
}
