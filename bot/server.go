package bot

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kptbot/kptbot/forge"
)

// Handler is what the server feeds: *Bot, or a test double.
type Handler interface {
	Handle(ctx context.Context, ev forge.Event) (Outcome, error)
	Reconcile(ctx context.Context, repo forge.Repo) (Outcome, error)
}

// WebhookParser verifies and normalizes one delivery (forge/github and
// forge/gitlab ParseWebhook with the secret bound).
type WebhookParser func(r *http.Request) (forge.Event, error)

// ServerOptions configures a Server.
type ServerOptions struct {
	Handler Handler
	// Parsers maps a forge name to its webhook parser; the route is
	// POST /webhooks/<forge>.
	Parsers map[string]WebhookParser
	// Repos lists what a periodic resync covers.
	Repos          func(ctx context.Context) ([]forge.Repo, error)
	ResyncInterval time.Duration
	Workers        int
	QueueSize      int
	Logger         *slog.Logger
	// Registry receives the server's metrics (nil: a new one).
	Registry *prometheus.Registry
	// DedupSize is how many delivery ids are remembered (default 10000).
	DedupSize int
}

// Server is the webhook server: deliveries are verified, deduplicated,
// acknowledged with 202 once queued (503 when the queue is full), and
// processed by a worker pool in which one repository's events always go
// to the same worker, so they are handled in order and never concurrently.
type Server struct {
	opts    ServerOptions
	log     *slog.Logger
	queues  []chan job
	dedup   *dedup
	reg     *prometheus.Registry
	metrics serverMetrics

	mu       sync.Mutex
	ready    bool
	draining bool
	wg       sync.WaitGroup
}

type job struct {
	ev     forge.Event
	resync bool
}

type serverMetrics struct {
	deliveries *prometheus.CounterVec
	handled    *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	queued     prometheus.Gauge
}

// NewServer returns a server; call Run to start its workers.
func NewServer(opts ServerOptions) *Server {
	if opts.Workers < 1 {
		opts.Workers = 4
	}
	if opts.QueueSize < opts.Workers {
		opts.QueueSize = opts.Workers
	}
	if opts.DedupSize < 1 {
		opts.DedupSize = 10000
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	s := &Server{opts: opts, log: opts.Logger, dedup: newDedup(opts.DedupSize), reg: opts.Registry}
	for i := 0; i < opts.Workers; i++ {
		s.queues = append(s.queues, make(chan job, opts.QueueSize/opts.Workers))
	}
	s.metrics = serverMetrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kptbot_webhook_deliveries_total", Help: "Webhook deliveries by forge and result (queued, duplicate, rejected, full, ignored)."}, []string{"forge", "result"}),
		handled:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kptbot_events_handled_total", Help: "Events and resyncs handled, by kind and result."}, []string{"kind", "result"}),
		duration:   prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kptbot_event_duration_seconds", Help: "Time to handle one event or resync.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}, []string{"kind"}),
		queued:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "kptbot_queue_depth", Help: "Events waiting for a worker."}),
	}
	s.reg.MustRegister(s.metrics.deliveries, s.metrics.handled, s.metrics.duration, s.metrics.queued)
	return s
}

// Router returns the HTTP routes: the webhooks, health, readiness and
// metrics.
func (s *Server) Router() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Recovery())
	r.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok\n") })
	r.GET("/readyz", func(c *gin.Context) {
		s.mu.Lock()
		ok := s.ready && !s.draining
		s.mu.Unlock()
		if !ok {
			c.String(http.StatusServiceUnavailable, "not ready\n")
			return
		}
		c.String(http.StatusOK, "ready\n")
	})
	r.GET("/metrics", gin.WrapH(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{})))
	r.POST("/webhooks/:forge", s.webhook)
	return r
}

// webhook is the one place delivery errors become HTTP statuses.
func (s *Server) webhook(c *gin.Context) {
	name := c.Param("forge")
	parse, ok := s.opts.Parsers[name]
	if !ok {
		c.JSON(http.StatusNotFound, gin.H{"error": "no webhook endpoint for forge " + name})
		return
	}
	ev, err := parse(c.Request)
	if err != nil {
		status := http.StatusBadRequest
		switch {
		case errors.Is(err, forge.ErrUnauthorized):
			status = http.StatusUnauthorized
		case errors.Is(err, forge.ErrTooLarge):
			status = http.StatusRequestEntityTooLarge
		}
		s.metrics.deliveries.WithLabelValues(name, "rejected").Inc()
		s.log.Warn("webhook rejected", "forge", name, "status", status, "err", err)
		c.JSON(status, gin.H{"error": http.StatusText(status)})
		return
	}
	if ev.Kind == forge.EventIgnored || ev.Kind == forge.EventPing {
		s.metrics.deliveries.WithLabelValues(name, "ignored").Inc()
		c.JSON(http.StatusOK, gin.H{"ignored": ev.Ignored, "kind": ev.Kind})
		return
	}
	key := name + "/" + ev.DeliveryID
	if ev.DeliveryID != "" && !s.dedup.claim(key) {
		s.metrics.deliveries.WithLabelValues(name, "duplicate").Inc()
		c.JSON(http.StatusOK, gin.H{"duplicate": ev.DeliveryID})
		return
	}
	if !s.enqueue(job{ev: ev}) {
		s.dedup.release(key) // the forge redelivers after a 503
		s.metrics.deliveries.WithLabelValues(name, "full").Inc()
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "queue full; redeliver later"})
		return
	}
	s.metrics.deliveries.WithLabelValues(name, "queued").Inc()
	c.JSON(http.StatusAccepted, gin.H{"queued": ev.DeliveryID})
}

func (s *Server) enqueue(j job) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return false
	}
	h := fnv.New32a()
	h.Write([]byte(j.ev.Forge + "/" + j.ev.Repo.FullName))
	q := s.queues[int(h.Sum32()%uint32(len(s.queues)))]
	select {
	case q <- j:
		s.metrics.queued.Inc()
		return true
	default:
		return false
	}
}

// Run starts the workers and the periodic resync, and blocks until ctx is
// done; then it stops taking deliveries and drains the queued work.
func (s *Server) Run(ctx context.Context) error {
	work, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	for _, q := range s.queues {
		s.wg.Add(1)
		go s.worker(work, q)
	}
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
	var resync <-chan time.Time
	if s.opts.ResyncInterval > 0 && s.opts.Repos != nil {
		t := time.NewTicker(s.opts.ResyncInterval)
		defer t.Stop()
		resync = t.C
		s.resync(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			s.mu.Lock()
			s.draining = true
			for _, q := range s.queues {
				close(q)
			}
			s.mu.Unlock()
			s.wg.Wait()
			return nil
		case <-resync:
			s.resync(ctx)
		}
	}
}

// resync queues every repository for reconciliation, repairing whatever
// a missed webhook or a crash left behind.
func (s *Server) resync(ctx context.Context) {
	repos, err := s.opts.Repos(ctx)
	if err != nil {
		s.log.Error("listing repositories for resync", "err", err)
		return
	}
	for _, r := range repos {
		if !s.enqueue(job{ev: forge.Event{Forge: r.Forge, Repo: r}, resync: true}) {
			s.log.Warn("resync skipped: queue full", "repo", r.FullName)
		}
	}
}

func (s *Server) worker(ctx context.Context, q chan job) {
	defer s.wg.Done()
	for j := range q {
		s.metrics.queued.Dec()
		s.process(ctx, j)
	}
}

func (s *Server) process(ctx context.Context, j job) {
	kind := string(j.ev.Kind)
	if j.resync {
		kind = "resync"
	}
	start := time.Now()
	var err error
	if j.resync {
		_, err = s.opts.Handler.Reconcile(ctx, j.ev.Repo)
	} else {
		_, err = s.opts.Handler.Handle(ctx, j.ev)
	}
	s.metrics.duration.WithLabelValues(kind).Observe(time.Since(start).Seconds())
	result := "ok"
	if err != nil {
		result = "error"
		s.log.Error("event failed", "delivery", j.ev.DeliveryID, "repo", j.ev.Repo.FullName, "kind", kind, "err", err)
	}
	s.metrics.handled.WithLabelValues(kind, result).Inc()
}

// dedup remembers the last n delivery ids.
type dedup struct {
	mu   sync.Mutex
	set  map[string]bool
	ring []string
	next int
}

func newDedup(n int) *dedup { return &dedup{set: map[string]bool{}, ring: make([]string, n)} }

// claim records k and reports whether it was new: the check and the
// record are one step, so two copies of a delivery racing in are one.
func (d *dedup) claim(k string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.set[k] {
		return false
	}
	delete(d.set, d.ring[d.next])
	d.ring[d.next] = k
	d.set[k] = true
	d.next = (d.next + 1) % len(d.ring)
	return true
}

// release forgets k (a delivery that could not be queued).
func (d *dedup) release(k string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.set, k)
}
