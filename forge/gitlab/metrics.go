package gitlab

import (
	"net/http"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgemetrics"
)

// Instrument counts c's requests under forge "gitlab" and identity (for
// example "gitlab.com/kptbot-token"; never the token), records GitLab's
// RateLimit-Remaining, and reports c's write scheduler. The metrics are
// the same set the GitHub adapter's clients report to, so both forges
// share one registry. Call it before c is used.
func (c *Client) Instrument(m *forgemetrics.Metrics, identity string) {
	c.hook.next = m.Transport(c.hook.next, forge.GitLab, identity, "RateLimit-Remaining")
	m.Watch(forge.GitLab, identity, c.Scheduler)
}

// hookTransport is the one place requests leave through, so wrappers
// (Instrument) can be added after construction. A write is counted once,
// with its final answer, however often the scheduler retried it.
type hookTransport struct{ next http.RoundTripper }

func (h *hookTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return h.next.RoundTrip(req)
}
