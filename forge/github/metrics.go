package github

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgemetrics"
)

// Metrics is forgemetrics.Metrics: one set of forge metrics per registry,
// shared with the GitLab adapter. The name is kept for existing callers.
type Metrics = forgemetrics.Metrics

// NewMetrics is forgemetrics.New, kept for existing callers. Create the
// metrics once per registry and instrument every forge's clients with it.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) { return forgemetrics.New(reg) }

// Instrument counts c's requests under forge "github" and identity (for
// example "app-1234/installation-42"; never a token), records GitHub's
// X-RateLimit-Remaining, and reports c's scheduler. Call it before c is
// used.
func (c *Client) Instrument(m *forgemetrics.Metrics, identity string) {
	c.hook.next = m.Transport(c.hook.next, forge.GitHub, identity, "X-Ratelimit-Remaining")
	m.Watch(forge.GitHub, identity, c.Scheduler)
}
