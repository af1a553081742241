// Package forgemetrics is the Prometheus view of kptbot's forge traffic,
// shared by every adapter so that GitHub and GitLab clients report on one
// registry under one set of names, told apart by the forge label:
// requests by kind (read, write) and status, each identity's remaining
// rate-limit budget, and its write scheduler's waits, retries and
// rate-limit pauses.
package forgemetrics

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kptbot/kptbot/forge/ratelimit"
)

// Metrics holds one process's forge metrics. Create it once per registry
// with New and hand it to each client's Instrument.
type Metrics struct {
	requests  *prometheus.CounterVec
	remaining *prometheus.GaugeVec

	mu     sync.Mutex
	scheds map[identity]*ratelimit.Scheduler
}

type identity struct{ forge, name string }

var (
	schedWaitDesc  = prometheus.NewDesc("kptbot_forge_write_wait_seconds_total", "Time writes waited for the identity's rate-limit budget.", []string{"forge", "identity"}, nil)
	schedRetryDesc = prometheus.NewDesc("kptbot_forge_write_retries_total", "Writes retried after a transient error or a rate limit.", []string{"forge", "identity"}, nil)
	schedLimitDesc = prometheus.NewDesc("kptbot_forge_rate_limited_total", "Rate-limit answers that paused the identity.", []string{"forge", "identity"}, nil)
)

// New registers the forge metrics with reg. A registry takes them once:
// a second New on the same registry is an AlreadyRegisteredError.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kptbot_forge_requests_total", Help: "Forge API requests by kind (read, write) and HTTP status.",
		}, []string{"forge", "identity", "kind", "status"}),
		remaining: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kptbot_forge_ratelimit_remaining", Help: "Requests left in the identity's primary rate-limit window, as the forge last reported.",
		}, []string{"forge", "identity"}),
		scheds: map[identity]*ratelimit.Scheduler{},
	}
	for _, c := range []prometheus.Collector{m.requests, m.remaining, m} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Describe implements prometheus.Collector for the schedulers' counters.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- schedWaitDesc
	ch <- schedRetryDesc
	ch <- schedLimitDesc
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, s := range m.scheds {
		st := s.Stats()
		ch <- prometheus.MustNewConstMetric(schedWaitDesc, prometheus.CounterValue, st.Waited.Seconds(), id.forge, id.name)
		ch <- prometheus.MustNewConstMetric(schedRetryDesc, prometheus.CounterValue, float64(st.Retries), id.forge, id.name)
		ch <- prometheus.MustNewConstMetric(schedLimitDesc, prometheus.CounterValue, float64(st.RateLimited), id.forge, id.name)
	}
}

// Watch reports s, the write scheduler of identity on forge; a later
// Watch of the same identity replaces it.
func (m *Metrics) Watch(forge, name string, s *ratelimit.Scheduler) {
	if s == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scheds[identity{forge, name}] = s
}

// Transport counts every request sent through next under forge and
// identity (a name such as "installation-42" or "gitlab-token", never a
// token) and records the remaining budget from the remainingHeader of
// each answer (GitHub: X-RateLimit-Remaining, GitLab: RateLimit-Remaining).
func (m *Metrics) Transport(next http.RoundTripper, forge, identity, remainingHeader string) http.RoundTripper {
	return &transport{next: next, m: m, forge: forge, identity: identity, header: remainingHeader}
}

type transport struct {
	next                    http.RoundTripper
	m                       *Metrics
	forge, identity, header string
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	kind := "write"
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		kind = "read"
	}
	resp, err := t.next.RoundTrip(req)
	status := "error"
	if err == nil {
		status = strconv.Itoa(resp.StatusCode)
		if v, perr := strconv.ParseFloat(resp.Header.Get(t.header), 64); perr == nil {
			t.m.remaining.WithLabelValues(t.forge, t.identity).Set(v)
		}
	}
	t.m.requests.WithLabelValues(t.forge, t.identity, kind, status).Inc()
	return resp, err
}
