package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/workqueue"
)

// Handler is what the server feeds: *bot.Bot, or a test double.
type Handler interface {
	Handle(ctx context.Context, ev forge.Event) (bot.Outcome, error)
	Reconcile(ctx context.Context, repo forge.Repo) (bot.Outcome, error)
}

// WebhookParser verifies and normalizes one delivery (forge/github and
// forge/gitlab ParseWebhook with the secret bound).
type WebhookParser func(r *http.Request) (forge.Event, error)

// Options configures a Server.
type Options struct {
	Handler Handler
	// Parsers maps a forge name to its webhook parser; the route is
	// POST /webhooks/<forge>.
	Parsers map[string]WebhookParser
	// Repos lists what a periodic resync covers.
	Repos          func(ctx context.Context) ([]forge.Repo, error)
	ResyncInterval time.Duration
	Workers        int
	// LowerWorkerPriority runs each worker on its own OS thread at a lower
	// CPU priority than the intake's (Linux; see lowerWorkerPriority).
	LowerWorkerPriority bool
	// QueueSize bounds the distinct repositories with webhook work waiting
	// (default 1000); resyncs and fan-outs never count against it.
	QueueSize int
	Logger    *slog.Logger
	// Registry receives the server's metrics (nil: a new one).
	Registry *prometheus.Registry
	// DedupSize is how many delivery ids are remembered (default 10000).
	DedupSize int
	// RetryBackoff is the first delay before an item that panicked is
	// tried again (default 2s), doubled per attempt up to a minute;
	// MaxAttempts bounds the tries (default 3).
	RetryBackoff time.Duration
	MaxAttempts  int
	// MaxBody bounds a delivery's body (default 25 MB, GitHub's cap): a
	// larger declared length is refused with 413 before any of it is
	// read, and a body that grows past it is cut off.
	MaxBody int64
}

// Server is the webhook server: deliveries are verified, deduplicated,
// acknowledged with 202 once queued, and processed by a worker pool.
// Work is queued per repository (workqueue): whatever arrives for a
// repository while its item waits merges into it, a repository's work
// never runs concurrently, webhook work goes before resyncs and fan-outs,
// and only webhook work can fill the queue (503 then).
type Server struct {
	opts    Options
	log     *slog.Logger
	queue   *workqueue.Queue
	dedup   *dedup
	reg     *prometheus.Registry
	metrics serverMetrics

	mu       sync.Mutex
	ready    bool
	draining bool
	wg       sync.WaitGroup
}

type serverMetrics struct {
	deliveries *prometheus.CounterVec
	handled    *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	coalesced  *prometheus.CounterVec
	refused    prometheus.Counter
	items      *prometheus.CounterVec
}

// New returns a server; call Run to start its workers.
func New(opts Options) *Server {
	if opts.Workers < 1 {
		opts.Workers = 4
	}
	if opts.QueueSize < 1 {
		opts.QueueSize = 1000
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
	if opts.RetryBackoff <= 0 {
		opts.RetryBackoff = 2 * time.Second
	}
	if opts.MaxAttempts < 1 {
		opts.MaxAttempts = 3
	}
	if opts.MaxBody < 1 {
		opts.MaxBody = 25 << 20
	}
	s := &Server{opts: opts, log: opts.Logger, dedup: newDedup(opts.DedupSize), reg: opts.Registry,
		queue: workqueue.New(workqueue.Options{Capacity: opts.QueueSize})}
	s.metrics = serverMetrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kptbot_webhook_deliveries_total", Help: "Webhook deliveries by forge and result (queued, coalesced, duplicate, rejected, refused, ignored)."}, []string{"forge", "result"}),
		handled:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kptbot_events_handled_total", Help: "Events, jobs and resyncs handled, by kind and result."}, []string{"kind", "result"}),
		duration:   prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kptbot_event_duration_seconds", Help: "Time to handle one event, job or resync.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}, []string{"kind"}),
		coalesced:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kptbot_queue_coalesced_total", Help: "Work merged into a repository's waiting item instead of queued again, by priority."}, []string{"priority"}),
		refused:    prometheus.NewCounter(prometheus.CounterOpts{Name: "kptbot_webhooks_refused_total", Help: "Webhook deliveries answered 503 because too many repositories had webhook work waiting."}),
		items:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kptbot_queue_items_total", Help: "Work items finished, by result (ok, error, retried, dropped)."}, []string{"result"}),
	}
	stat := func(f func(workqueue.Stats) float64) func() float64 {
		return func() float64 { return f(s.queue.Stats()) }
	}
	depth := func(p workqueue.Priority) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kptbot_queue_depth", Help: "Repositories with work waiting, by priority.", ConstLabels: prometheus.Labels{"priority": p.String()}},
			stat(func(st workqueue.Stats) float64 { return float64(st.Waiting[p]) }))
	}
	s.reg.MustRegister(s.metrics.deliveries, s.metrics.handled, s.metrics.duration, s.metrics.coalesced, s.metrics.refused, s.metrics.items,
		depth(workqueue.Interactive), depth(workqueue.Bulk),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kptbot_queue_running", Help: "Work items being handled."},
			stat(func(st workqueue.Stats) float64 { return float64(st.Running) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kptbot_queue_oldest_item_age_seconds", Help: "Age of the oldest waiting work item."},
			stat(func(st workqueue.Stats) float64 { return st.OldestAge.Seconds() })))
	return s
}

// ginReleaseMode switches gin's process-wide mode (debug route logging
// off) once: gin v1.10's SetMode writes a plain global, which servers
// built side by side (tests, replicas) must not race on.
var ginReleaseMode = sync.OnceFunc(func() { gin.SetMode(gin.ReleaseMode) })

// Router returns the HTTP routes: the webhooks, health, readiness and
// metrics.
func (s *Server) Router() http.Handler {
	ginReleaseMode()
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
	if c.Request.ContentLength > s.opts.MaxBody {
		s.metrics.deliveries.WithLabelValues(name, "rejected").Inc()
		s.log.Warn("webhook rejected", "forge", name, "status", http.StatusRequestEntityTooLarge, "content_length", c.Request.ContentLength)
		c.Header("Connection", "close")
		c.JSON(http.StatusRequestEntityTooLarge, gin.H{"error": http.StatusText(http.StatusRequestEntityTooLarge)})
		return
	}
	body := &cappedBody{ReadCloser: http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxBody)}
	c.Request.Body = body
	ev, err := parse(c.Request)
	if err != nil {
		status := http.StatusBadRequest
		switch {
		case errors.Is(err, forge.ErrUnauthorized):
			status = http.StatusUnauthorized
		case errors.Is(err, forge.ErrTooLarge), body.over:
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
	if ev.Repo.Forge == "" {
		ev.Repo.Forge = ev.Forge
	}
	coalesced, err := s.queue.Add(workqueue.Work{Key: bot.RepoKey(ev.Repo), Priority: workqueue.Interactive, Subject: ev.Repo,
		Hint: &workqueue.Hint{Merge: eventMergeKey(ev), Value: ev}})
	if err != nil {
		s.dedup.release(key) // the forge may redeliver after a 503
		s.metrics.deliveries.WithLabelValues(name, "refused").Inc()
		s.metrics.refused.Inc()
		st := s.queue.Stats()
		s.log.Warn("webhook refused", "forge", name, "delivery", ev.DeliveryID, "repo", ev.Repo.FullName, "err", err,
			"waiting_interactive", st.Waiting[workqueue.Interactive], "capacity", s.opts.QueueSize)
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "too many repositories have webhook work waiting; redeliver later"})
		return
	}
	result := "queued"
	if coalesced {
		result = "coalesced"
		s.metrics.coalesced.WithLabelValues(workqueue.Interactive.String()).Inc()
	}
	s.metrics.deliveries.WithLabelValues(name, result).Inc()
	c.JSON(http.StatusAccepted, gin.H{"queued": ev.DeliveryID})
}

// cappedBody notes that a body ran past the cap (parsers report a read
// error, which is a 413 then).
type cappedBody struct {
	io.ReadCloser
	over bool
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		b.over = true
	}
	return n, err
}

// eventMergeKey says which waiting events a newer one supersedes: the same
// kind on the same change or ref (the bot reads current state, so the
// newer hint is enough). Comments and reviews never merge: each is a
// person's act with its own reply.
func eventMergeKey(ev forge.Event) string {
	switch ev.Kind {
	case forge.EventCommentCreated, forge.EventCommentEdited, forge.EventReviewSubmitted, forge.EventReviewDismissed,
		forge.EventApproved, forge.EventUnapproved, forge.EventInstallationAdded, forge.EventInstallationRemoved:
		return ""
	}
	n := 0
	if ev.Change != nil {
		n = ev.Change.Number
	}
	return fmt.Sprintf("event %s #%d %s", ev.Kind, n, ev.Ref)
}

// Run starts the workers and the periodic resync, and blocks until ctx is
// done; then it stops taking deliveries and drains the queued work.
func (s *Server) Run(ctx context.Context) error {
	work, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	s.intakeHeadroom()
	for i := 0; i < s.opts.Workers; i++ {
		s.wg.Add(1)
		go s.worker(work)
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
			s.mu.Unlock()
			s.queue.Close()
			s.wg.Wait()
			return nil
		case <-resync:
			s.resync(ctx)
		}
	}
}

// intakeHeadroom gives the Go scheduler a P for every worker and one
// more, unless GOMAXPROCS is set: a delivery's goroutine then finds an
// idle P at once instead of queueing behind workers busy rendering (Go
// switches goroutines on a P every 10 ms; the kernel shares the cores
// among the extra threads at a finer grain and runs a woken thread
// soon), so acceptance never waits for work. Measured by
// BenchmarkWebhookIntakeUnderResync.
func (s *Server) intakeHeadroom() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	if want := s.opts.Workers + 1; runtime.GOMAXPROCS(0) < want {
		runtime.GOMAXPROCS(want)
		s.log.Info("GOMAXPROCS raised so webhook intake never waits for a worker", "gomaxprocs", want, "workers", s.opts.Workers)
	}
}

// resync marks every repository dirty: its waiting item (one is made when
// there is none) will reconcile it, repairing whatever a missed webhook or
// a crash left behind. A repository already waiting is not queued again.
func (s *Server) resync(ctx context.Context) {
	repos, err := s.opts.Repos(ctx)
	if err != nil {
		s.log.Error("listing repositories for resync", "err", err)
	}
	// Each replica walks the repositories in its own order, so replicas
	// seldom work on one repository at the same moment.
	rand.Shuffle(len(repos), func(i, j int) { repos[i], repos[j] = repos[j], repos[i] })
	// A batch at a time under one queue lock: a delivery waits at most
	// for one batch, never for a thousand lock hand-overs.
	const batch = 128
	for len(repos) > 0 {
		n := min(batch, len(repos))
		ws := make([]workqueue.Work, n)
		for i, r := range repos[:n] {
			ws[i] = workqueue.Work{Key: bot.RepoKey(r), Priority: workqueue.Bulk, Subject: r, Dirty: true}
		}
		repos = repos[n:]
		coalesced, err := s.queue.AddBulk(ws)
		s.metrics.coalesced.WithLabelValues(workqueue.Bulk.String()).Add(float64(coalesced))
		if err != nil {
			if !errors.Is(err, workqueue.ErrClosed) {
				s.log.Error("resync not queued", "err", err)
			}
			return
		}
	}
}

// Resync marks one repository for reconciliation (bulk work).
func (s *Server) Resync(r forge.Repo) {
	coalesced, err := s.queue.Add(workqueue.Work{Key: bot.RepoKey(r), Priority: workqueue.Bulk, Subject: r, Dirty: true})
	if coalesced {
		s.metrics.coalesced.WithLabelValues(workqueue.Bulk.String()).Inc()
	}
	if err != nil && !errors.Is(err, workqueue.ErrClosed) {
		s.log.Error("resync not queued", "repo", r.FullName, "err", err)
	}
}

// Schedule queues a job in r's own serialization, as bulk work: a job
// with the same Key already waiting for r is replaced by this one.
func (s *Server) Schedule(r forge.Repo, j bot.Job) error {
	coalesced, err := s.queue.Add(workqueue.Work{Key: bot.RepoKey(r), Priority: workqueue.Bulk, Subject: r, Hint: &workqueue.Hint{Merge: j.Key, Value: j}})
	if coalesced {
		s.metrics.coalesced.WithLabelValues(workqueue.Bulk.String()).Inc()
	}
	if err != nil {
		return fmt.Errorf("queueing %s for %s: %w", j.Key, r.FullName, err)
	}
	return nil
}

// WaitIdle blocks until no work waits, runs or awaits a retry (for tests
// and tools that need the effects of what they delivered).
func (s *Server) WaitIdle(ctx context.Context) error { return s.queue.WaitIdle(ctx) }

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
