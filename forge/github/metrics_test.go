package github

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
)

func TestMetricsCountRequestsAndBudget(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Ratelimit-Remaining", "4321")
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
			return
		}
		fmt.Fprint(w, `{"permission":"write","user":{"login":"alice"}}`)
	}))
	t.Cleanup(srv.Close)
	c, err := NewTokenClient("ghp_secret_token", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := forgemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	c.Instrument(m, "token-ci")
	ctx := context.Background()
	site := forge.Repo{FullName: "acme/site-a"}
	for range 2 {
		if _, err := c.Permission(ctx, site, "alice"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Comment(ctx, site, 8, "hi"); err == nil {
		t.Fatal("comment on a missing PR succeeded")
	}
	want := `
# HELP kptbot_forge_requests_total Forge API requests by kind (read, write) and HTTP status.
# TYPE kptbot_forge_requests_total counter
kptbot_forge_requests_total{forge="github",identity="token-ci",kind="read",status="200"} 2
kptbot_forge_requests_total{forge="github",identity="token-ci",kind="write",status="404"} 1
# HELP kptbot_forge_ratelimit_remaining Requests left in the identity's primary rate-limit window, as the forge last reported.
# TYPE kptbot_forge_ratelimit_remaining gauge
kptbot_forge_ratelimit_remaining{forge="github",identity="token-ci"} 4321
# HELP kptbot_forge_rate_limited_total Rate-limit answers that paused the identity.
# TYPE kptbot_forge_rate_limited_total counter
kptbot_forge_rate_limited_total{forge="github",identity="token-ci"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kptbot_forge_requests_total", "kptbot_forge_ratelimit_remaining", "kptbot_forge_rate_limited_total"); err != nil {
		t.Error(err)
	}
	out, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fmt.Sprint(out), "ghp_secret_token") {
		t.Error("a token leaked into the metrics")
	}
}
