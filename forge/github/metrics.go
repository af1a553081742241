package github

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kptbot/kptbot/forge/ratelimit"
)

// Metrics is one process's view of its GitHub traffic: requests by kind
// (read, write) and status, each identity's remaining primary budget, and
// its write scheduler's waits, retries and rate-limit pauses.
type Metrics struct {
	requests  *prometheus.CounterVec
	remaining *prometheus.GaugeVec

	mu     sync.Mutex
	scheds map[string]*ratelimit.Scheduler
}

var (
	schedWaitDesc  = prometheus.NewDesc("kptbot_forge_write_wait_seconds_total", "Time writes waited for the identity's rate-limit budget.", []string{"forge", "identity"}, nil)
	schedRetryDesc = prometheus.NewDesc("kptbot_forge_write_retries_total", "Writes retried after a transient error or a rate limit.", []string{"forge", "identity"}, nil)
	schedLimitDesc = prometheus.NewDesc("kptbot_forge_rate_limited_total", "Rate-limit answers that paused the identity.", []string{"forge", "identity"}, nil)
)

// NewMetrics registers GitHub's metrics with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kptbot_forge_requests_total", Help: "Forge API requests by kind (read, write) and HTTP status.",
		}, []string{"forge", "identity", "kind", "status"}),
		remaining: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kptbot_forge_ratelimit_remaining", Help: "Requests left in the identity's primary rate-limit window, as the forge last reported.",
		}, []string{"forge", "identity"}),
		scheds: map[string]*ratelimit.Scheduler{},
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
		ch <- prometheus.MustNewConstMetric(schedWaitDesc, prometheus.CounterValue, st.Waited.Seconds(), "github", id)
		ch <- prometheus.MustNewConstMetric(schedRetryDesc, prometheus.CounterValue, float64(st.Retries), "github", id)
		ch <- prometheus.MustNewConstMetric(schedLimitDesc, prometheus.CounterValue, float64(st.RateLimited), "github", id)
	}
}

// Instrument counts c's requests under identity (for example
// "app-1234/installation-42"; never a token) and reports its scheduler.
// Call it before c is used.
func (c *Client) Instrument(m *Metrics, identity string) {
	c.hook.next = &metricsTransport{next: c.hook.next, m: m, identity: identity}
	if c.Scheduler != nil {
		m.mu.Lock()
		m.scheds[identity] = c.Scheduler
		m.mu.Unlock()
	}
}

type metricsTransport struct {
	next     http.RoundTripper
	m        *Metrics
	identity string
}

func (t *metricsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	kind := "write"
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		kind = "read"
	}
	resp, err := t.next.RoundTrip(req)
	status := "error"
	if err == nil {
		status = strconv.Itoa(resp.StatusCode)
		if v, perr := strconv.ParseFloat(resp.Header.Get("X-Ratelimit-Remaining"), 64); perr == nil {
			t.m.remaining.WithLabelValues("github", t.identity).Set(v)
		}
	}
	t.m.requests.WithLabelValues("github", t.identity, kind, status).Inc()
	return resp, err
}
