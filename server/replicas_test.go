package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github"
	"github.com/kptbot/kptbot/forge/ratelimit"
	"github.com/kptbot/kptbot/internal/fleettest"
	"github.com/kptbot/kptbot/porch"
)

// replicaEnv carries a replica process's settings (JSON).
const replicaEnv = "KPTBOT_TEST_REPLICA"

type replicaConfig struct {
	API, Git, Listen string
	Resync, Gap      time.Duration
}

// TestReplicaProcess is not a test: the convergence tests run the test
// binary again with this test selected to get a real `kptbot serve`-like
// process (a Bot and a Server on the fake GitHub) that they can SIGKILL.
func TestReplicaProcess(t *testing.T) {
	raw := os.Getenv(replicaEnv)
	if raw == "" {
		t.Skip("started by TestConvergenceAcrossReplicas")
	}
	var cfg replicaConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	// GitHub's secondary limits, scaled to the test's write gap.
	scale := int(time.Second / cfg.Gap)
	sched := ratelimit.New(ratelimit.Limits{PerMinute: 80 * scale, PerHour: 500 * scale, MinGap: cfg.Gap}, nil)
	client, err := github.NewClient(&http.Client{Transport: github.NewScheduledTransport(http.DefaultTransport, sched)}, cfg.API)
	if err != nil {
		t.Fatal(err)
	}
	client.GitURL = cfg.Git
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	b, err := newBot(bot.Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(client)}, Name: "kptbot", Login: "kptbot[bot]", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Handler: b, Parsers: map[string]WebhookParser{forge.GitHub: githubParser},
		Repos: client.ListRepos, ResyncInterval: cfg.Resync, Workers: 4, Logger: log})
	l, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(l, s.Router())
	s.Run(context.Background()) // until killed
}

// replica is a running replica process.
type replica struct {
	url string
	cmd *exec.Cmd
	log string
}

func startReplica(t *testing.T, cfg replicaConfig) *replica {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listen = l.Addr().String()
	l.Close()
	raw, _ := json.Marshal(cfg)
	r := &replica{url: "http://" + cfg.Listen, log: filepath.Join(t.TempDir(), "replica.log")}
	out, err := os.Create(r.log)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(os.Args[0], "-test.run=^TestReplicaProcess$", "-test.count=1")
	r.cmd.Env = append(os.Environ(), replicaEnv+"="+string(raw))
	r.cmd.Stdout, r.cmd.Stderr = out, out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		r.cmd.Wait()
		out.Close()
		if t.Failed() {
			raw, _ := os.ReadFile(r.log)
			lines := strings.Split(string(raw), "\n")
			t.Logf("replica %s, last lines:\n%s", r.url, strings.Join(lines[max(0, len(lines)-60):], "\n"))
		}
	})
	for i := 0; i < 600; i++ {
		if resp, err := http.Get(r.url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("replica never became ready")
	return nil
}

// signedPost delivers a GitHub webhook and returns the status.
func signedPost(t testing.TB, url, event, id string, body []byte) int {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(hookSecret))
	mac.Write(body)
	req, _ := http.NewRequest("POST", url+"/webhooks/github", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestConvergenceAcrossReplicas is the convergence issue's scenario: two
// replicas (separate processes, so one can be SIGKILLed) resync 20
// downstream repositories following one upstream every 2 s. (a) After a
// tag push, every update PR reaches the new lock. (b) One replica is
// killed with SIGKILL in the middle of the next tag's fan-out; the
// survivor brings every PR there through its resyncs (the tag's webhook
// went to the dead one), with no PR opened twice.
//
// Writes are spaced by gap (GitHub's pacing is 1 s; the test uses less to
// stay quick); the budget each phase is held to, and reports, is
// 2 writes per PR at that pacing plus 10 s, plus one resync interval for
// the survivor.
func TestConvergenceAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two replica processes for a minute")
	}
	t.Parallel()
	const n = 20
	gap, resync := 100*time.Millisecond, 2*time.Second
	if os.Getenv("KPTBOT_REAL_PACING") != "" {
		gap = time.Second
	}
	w := newGHWorld(t, 0)
	ctx := context.Background()
	plain, err := github.NewClient(nil, w.gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	plain.GitURL = w.gh.GitURL
	up := forge.Repo{Forge: forge.GitHub, FullName: "acme/blueprints", DefaultBranch: "main", CloneURL: w.gh.GitURL + "acme/blueprints.git"}
	sha := w.gh.Seed(up, "main", map[string][]byte{"basens/Kptfile": []byte(basensKptfile), "basens/ns.yaml": []byte(basensNS("v1"))})
	if err := plain.CreateTag(ctx, up, "basens/v1", sha, "v1"); err != nil {
		t.Fatal(err)
	}
	var downs []forge.Repo
	for i := 0; i < n; i++ {
		r := forge.Repo{Forge: forge.GitHub, FullName: fmt.Sprintf("acme/site-%02d", i), DefaultBranch: "main"}
		w.gh.Seed(r, "main", map[string][]byte{"kptbot.yaml": []byte(fleettest.Follower(fmt.Sprintf("site-%02d", i)))})
		downs = append(downs, r)
	}
	// atLock counts downstreams whose one update PR holds lock.
	atLock := func(lock string) int {
		done := 0
		for _, r := range downs {
			cs, err := plain.ListOpenChanges(ctx, r)
			if err == nil && len(cs) == 1 {
				if m, ok := bot.ParseMarker(cs[0].Body); ok && m.UpstreamLock == lock {
					done++
				}
			}
		}
		return done
	}
	waitFor := func(what, lock string, limit time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for atLock(lock) < n {
			if time.Since(start) > limit {
				for _, r := range downs {
					cs, _ := plain.ListOpenChanges(ctx, r)
					for _, c := range cs {
						if m, _ := bot.ParseMarker(c.Body); m.UpstreamLock != lock {
							t.Logf("%s#%d: head %s, marker %+v", r.FullName, c.Number, c.HeadSHA, m)
						}
					}
				}
				t.Fatalf("%s: %d of %d PRs at the new lock after %v", what, atLock(lock), n, limit)
			}
			time.Sleep(100 * time.Millisecond)
		}
		return time.Since(start)
	}
	publish := func(v int, base string) string {
		t.Helper()
		head, err := plain.PushFiles(ctx, up, "main", base, base, map[string][]byte{"basens/ns.yaml": []byte(basensNS(fmt.Sprintf("v%d", v)))}, "basens v"+fmt.Sprint(v))
		if err != nil {
			t.Fatal(err)
		}
		if err := plain.CreateTag(ctx, up, fmt.Sprintf("basens/v%d", v), head, ""); err != nil {
			t.Fatal(err)
		}
		return head
	}
	tagPush := func(url string, v int, sha string) {
		t.Helper()
		body := w.payload("push/tag-created.ghes.payload.json", map[string]any{
			"ref": fmt.Sprintf("refs/tags/basens/v%d", v), "after": sha, "before": forge.ZeroSHA, "created": true, "deleted": false,
			"repository.full_name": up.FullName, "repository.name": "blueprints", "repository.clone_url": up.CloneURL, "sender.login": "alice",
		})
		if st := signedPost(t, url, "push", w.id(), body); st != http.StatusAccepted {
			t.Fatalf("tag push to %s: HTTP %d", url, st)
		}
	}

	cfg := replicaConfig{API: w.gh.URL, Git: w.gh.GitURL, Resync: resync, Gap: gap}
	a, b := startReplica(t, cfg), startReplica(t, cfg)
	budget := time.Duration(2*n)*gap + 10*time.Second
	generous := 4*budget + time.Minute // a loaded machine; the figure is logged
	waitFor("the first resyncs' clones", sha, generous)

	v2 := publish(2, sha)
	tagPush(a.url, 2, v2)
	took := waitFor("(a) after a tag push", v2, generous)
	t.Logf("(a) all %d PRs at the new lock in %v (budget: %v = 2 writes × %d PRs × %v + 10s)", n, took.Round(100*time.Millisecond), budget, n, gap)

	v3 := publish(3, v2)
	tagPush(a.url, 3, v3)
	for atLock(v3) == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	mid := atLock(v3)
	if err := a.cmd.Process.Kill(); err != nil { // SIGKILL: no drain
		t.Fatal(err)
	}
	killed := time.Now()
	a.cmd.Wait()
	took = waitFor("(b) after SIGKILL of the replica fanning out", v3, generous)
	t.Logf("(b) killed with %d of %d at v3; the survivor converged in %v (budget: one resync %v + %v)", mid, n, time.Since(killed).Round(100*time.Millisecond), resync, budget)
	_ = took
	for _, r := range downs {
		cs, err := plain.ListChangesByHead(ctx, r, porch.UpdateBranch("team-ns"))
		if err != nil || len(cs) != 1 {
			t.Errorf("%s: %d update PRs (%v), want exactly one", r.FullName, len(cs), err)
		}
	}
	tags, err := plain.ListTags(ctx, up)
	if err != nil || len(tags) != 3 {
		t.Errorf("upstream tags %v, %v; want basens/v1..v3", tags, err)
	}
	for _, r := range downs[:3] {
		if ts, _ := plain.ListTags(ctx, r); len(ts) != 0 {
			t.Errorf("%s: tags %v; nothing was published", r.FullName, ts)
		}
	}
	if b.cmd.ProcessState != nil {
		t.Errorf("the survivor exited")
	}
}
