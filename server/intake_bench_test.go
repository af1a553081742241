package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/gcpolicy"
	"github.com/kptbot/kptbot/workqueue"
)

// loadgenEnv carries the load generator's plan (JSON) to the test binary
// re-executed as the generator.
const loadgenEnv = "KPTBOT_INTAKE_LOADGEN"

// loadPlan is what the generator sends: signed comment deliveries on
// Repos, round robin, at Rate a second for Seconds.
type loadPlan struct {
	URL     string   `json:"url"`
	Rate    int      `json:"rate"`
	Seconds int      `json:"seconds"`
	Repos   []string `json:"repos"`
}

// delivery is one delivery's outcome as the generator saw it.
type delivery struct {
	Status int           `json:"status"`
	Took   time.Duration `json:"took"` // request written to response read
	Late   time.Duration `json:"late"` // sent after its scheduled time by
}

const loadgenMarker = "LOADGEN-RESULT "

// TestIntakeLoadGenerator is not a test: BenchmarkWebhookIntakeUnderResync
// runs the test binary again with $KPTBOT_INTAKE_LOADGEN set, so the
// deliveries come from another process (its own CPU time, its own
// scheduler and garbage collector) over real HTTP, as a forge's would.
func TestIntakeLoadGenerator(t *testing.T) {
	raw := os.Getenv(loadgenEnv)
	if raw == "" {
		t.Skip("the load generator of BenchmarkWebhookIntakeUnderResync")
	}
	var plan loadPlan
	if err := json.Unmarshal([]byte(raw), &plan); err != nil {
		t.Fatal(err)
	}
	total := plan.Rate * plan.Seconds
	reqs := make([]func() *http.Request, total)
	for k := range reqs {
		full := plan.Repos[k%len(plan.Repos)]
		body := commentOn(t, forge.Repo{FullName: full}, "thanks, looks right")
		mac := hmac.New(sha256.New, []byte(hookSecret))
		mac.Write(body)
		sig := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		id := fmt.Sprint("intake-", k)
		reqs[k] = func() *http.Request {
			req, _ := http.NewRequest("POST", plan.URL+"/webhooks/github", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "issue_comment")
			req.Header.Set("X-GitHub-Delivery", id)
			req.Header.Set("X-Hub-Signature-256", sig)
			return req
		}
	}
	// A connection per delivery, as a forge's deliveries come: accepting
	// the connection is part of accepting the delivery.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	out := make([]delivery, total)
	var wg sync.WaitGroup
	start := time.Now()
	for k := range reqs {
		due := start.Add(time.Duration(k) * time.Second / time.Duration(plan.Rate))
		time.Sleep(time.Until(due))
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			req := reqs[k]()
			sent := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				out[k] = delivery{Status: -1, Took: time.Since(sent), Late: sent.Sub(due)}
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			out[k] = delivery{Status: resp.StatusCode, Took: time.Since(sent), Late: sent.Sub(due)}
		}(k)
	}
	wg.Wait()
	enc, _ := json.Marshal(out)
	fmt.Println(loadgenMarker + string(enc))
}

// BenchmarkWebhookIntakeUnderResync is the convergence issue's (c): 1,000
// repositories on the fake forge resynced every second (their first
// reconciles open 1,000 clone changes: real render work on every core),
// while another process sends signed comment deliveries for those
// repositories over HTTP, a new connection each, at 200 a second for
// 10 s. Reported: deliveries sent and refused (503) and the acceptance
// latency (request written to response read, as the sender sees it):
// p50, p99 and max; the server's own time in the handler; the load
// average at the start and the end.
func BenchmarkWebhookIntakeUnderResync(b *testing.B) {
	const n, rate, seconds = 1000, 200, 10
	// The collector as `kptbot serve` sets it (gcpolicy.Server: GOGC 400
	// under a soft memory limit, unless GOGC or GOMEMLIMIT are set).
	gc, err := gcpolicy.Server(os.Getenv, "auto", gcpolicy.ContainerLimit())
	if err != nil {
		b.Fatal(err)
	}
	oldPercent, oldLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	defer func() { debug.SetGCPercent(oldPercent); debug.SetMemoryLimit(oldLimit) }()
	debug.SetGCPercent(oldPercent)
	gc.Apply()
	for i := 0; i < b.N; i++ {
		fl := newFleet(b, n)
		list := func(ctx context.Context) ([]forge.Repo, error) {
			rs, err := fl.fake.ListRepos(ctx)
			for i := range rs {
				rs[i].Forge = forge.GitHub
			}
			return rs, err
		}
		s := New(Options{Handler: fl.bot, Workers: benchWorkers(), QueueSize: 1000, ResyncInterval: time.Second, Repos: list,
			LowerWorkerPriority: os.Getenv("KPTBOT_NICE_WORKERS") != "0", // as kptbot serve; 0 to compare
			Parsers:             map[string]WebhookParser{forge.GitHub: githubParser}})
		inside := &handlerTimes{}
		url := startAsServe(b, s, inside)
		repos, _ := list(context.Background())
		plan := loadPlan{URL: url, Rate: rate, Seconds: seconds}
		for _, r := range repos {
			plan.Repos = append(plan.Repos, r.FullName)
		}
		loadBefore := loadAverage()
		got := runLoadGenerator(b, plan)
		loadAfter := loadAverage()

		var took []time.Duration
		refused, failed, late := 0, 0, 0
		for _, d := range got {
			switch {
			case d.Status == http.StatusServiceUnavailable:
				refused++
			case d.Status != http.StatusAccepted:
				failed++
			}
			if d.Late > 10*time.Millisecond {
				late++
			}
			took = append(took, d.Took)
		}
		p50, p99, worst := percentiles(took)
		in50, in99, inMax := percentiles(inside.all())
		st := s.queue.Stats()
		b.Logf("(c) intake under a 1 s resync of %d repositories: %d deliveries at %d/s from another process, %d refused, %d other failures; "+
			"acceptance p50 %.1f ms, p99 %.1f ms, max %.1f ms (in the handler: p50 %.2f ms, p99 %.2f ms, max %.1f ms); %d sent over 10 ms late; "+
			"load average %s at the start, %s at the end; %d clone changes opened meanwhile by %d workers, GOMAXPROCS %d on %d CPUs, GOGC %d, generator at nice -10: %v",
			n, len(got), rate, refused, failed, ms(p50), ms(p99), ms(worst), ms(in50), ms(in99), ms(inMax), late,
			loadBefore, loadAfter, fl.fake.Calls("OpenChange"), benchWorkers(), runtime.GOMAXPROCS(0), runtime.NumCPU(), gcPercent(), generatorNice())
		b.ReportMetric(float64(len(got)), "deliveries")
		b.ReportMetric(float64(refused), "refused")
		b.ReportMetric(ms(p50), "p50-accept-ms")
		b.ReportMetric(ms(p99), "p99-accept-ms")
		b.ReportMetric(ms(worst), "max-accept-ms")
		b.ReportMetric(ms(in99), "p99-in-handler-ms")
		b.ReportMetric(float64(st.Waiting[workqueue.Bulk]), "bulk-waiting-at-end")
		b.ReportMetric(float64(fl.fake.Calls("OpenChange")), "clone-changes-opened")
		if failed > 0 {
			b.Fatalf("%d deliveries failed (neither accepted nor refused)", failed)
		}
	}
}

// startAsServe runs s as kptbot serve does (its http.Server with the
// default limits, behind the connection-capping listener), with h
// wrapping its handler, for the benchmark's duration.
func startAsServe(b *testing.B, s *Server, h *handlerTimes) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := s.HTTPServer(DefaultHTTPLimits)
	h.next, hs.Handler = hs.Handler, h
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { s.Run(ctx); close(stopped) }()
	go hs.Serve(LimitListener(l, DefaultHTTPLimits.MaxConns))
	b.Cleanup(func() { hs.Close(); cancel(); <-stopped })
	return "http://" + l.Addr().String()
}

// gcPercent is the garbage collector's target (GOGC).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// generatorNice reports whether the load generator runs ahead of the
// server in the CPU scheduler (nice -10, which needs root): it stands for
// a forge on another machine, whose sending a 2-core machine's busy
// workers must not delay, or the latency measured is the generator's own
// wait for a CPU.
func generatorNice() bool {
	_, err := exec.LookPath("nice")
	return err == nil && os.Geteuid() == 0
}

// runLoadGenerator runs plan in a child process (this test binary, as
// TestIntakeLoadGenerator) and returns what it measured.
func runLoadGenerator(b *testing.B, plan loadPlan) []delivery {
	raw, _ := json.Marshal(plan)
	args := []string{os.Args[0], "-test.run", "^TestIntakeLoadGenerator$", "-test.count", "1", "-test.bench", "^$"}
	if generatorNice() {
		args = append([]string{"nice", "-n", "-10"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), loadgenEnv+"="+string(raw))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("load generator: %v\n%s%s", err, out, stderr.Bytes())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), loadgenMarker); ok {
			var got []delivery
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				b.Fatal(err)
			}
			return got
		}
	}
	b.Fatalf("load generator printed no result:\n%s%s", out, stderr.Bytes())
	return nil
}

// handlerTimes records how long the server's handler took per webhook
// request, from the handler's entry to its return: the acceptance time
// without the connection, the network and the wait to be scheduled.
type handlerTimes struct {
	next http.Handler
	mu   sync.Mutex
	took []time.Duration
}

func (h *handlerTimes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	h.next.ServeHTTP(w, r)
	if strings.HasPrefix(r.URL.Path, "/webhooks/") {
		d := time.Since(start)
		h.mu.Lock()
		h.took = append(h.took, d)
		h.mu.Unlock()
	}
}

func (h *handlerTimes) all() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.took...)
}

// percentiles returns the p50, p99 and max of ds (zeros when empty).
func percentiles(ds []time.Duration) (p50, p99, worst time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)*99/100], ds[len(ds)-1]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// loadAverage is the machine's 1-, 5- and 15-minute load averages.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
