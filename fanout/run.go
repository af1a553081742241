package fanout

import (
	"maps"
	"sync"
	"time"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
)

// reportEvery spaces the progress reports of a long fan-out: the
// dashboard is written when the last follower is done, and at most this
// often before.
const reportEvery = 30 * time.Second

// fanRun is one fan-out of an upstream package's revision: each
// follower's state as its job finishes.
type fanRun struct {
	upstream forge.Repo
	pkg      string

	mu         sync.Mutex
	progress   map[string]string
	left       int
	lastReport time.Time
}

// runs remembers the newest run per upstream package: a newer
// revision's fan-out supersedes an older one still under way (its jobs
// replace the older ones waiting, and only it reports).
type runs struct {
	mu   sync.Mutex
	runs map[string]*fanRun
}

func (rs *runs) start(upstream forge.Repo, pkg string, followers []forge.Repo) *fanRun {
	run := &fanRun{upstream: upstream, pkg: pkg, progress: map[string]string{}, left: len(followers), lastReport: time.Now()}
	for _, r := range followers {
		run.progress[r.FullName] = "queued"
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.runs == nil {
		rs.runs = map[string]*fanRun{}
	}
	rs.runs[run.reportKey()] = run
	return run
}

// current reports whether run is its package's newest fan-out.
func (rs *runs) current(run *fanRun) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.runs[run.reportKey()] == run
}

// jobKey names a follower's job for this package: a newer revision's job
// replaces a waiting older one (both bring the follower to the newest).
func (run *fanRun) jobKey() string {
	return "fan-out " + bot.RepoKey(run.upstream) + " " + run.pkg
}

// reportKey names the progress report on the upstream: one waits at most.
func (run *fanRun) reportKey() string {
	return "fan-out report " + bot.RepoKey(run.upstream) + " " + run.pkg
}

// record sets a follower's state and reports whether the dashboard is
// due: the last follower is done, or the last report is old.
func (run *fanRun) record(repo, state string) bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	if prev, ok := run.progress[repo]; !ok || prev == "queued" {
		run.left--
	}
	run.progress[repo] = state
	if run.left <= 0 || time.Since(run.lastReport) >= reportEvery {
		run.lastReport = time.Now()
		return true
	}
	return false
}

// snapshot is the progress so far.
func (run *fanRun) snapshot() map[string]string {
	run.mu.Lock()
	defer run.mu.Unlock()
	return maps.Clone(run.progress)
}
