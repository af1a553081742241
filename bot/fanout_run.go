package bot

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/kptbot/kptbot/forge"
)

// fanOutReportEvery spaces the progress reports of a long fan-out: the
// dashboard is written when the last follower is done, and at most this
// often before.
const fanOutReportEvery = 30 * time.Second

// fanOutRun is one fan-out of an upstream package's revision: each
// follower's state as its job finishes.
type fanOutRun struct {
	upstream forge.Repo
	pkg      string

	mu         sync.Mutex
	progress   map[string]string
	left       int
	lastReport time.Time
}

// fanOutRuns remembers the newest run per upstream package: a newer
// revision's fan-out supersedes an older one still under way (its jobs
// replace the older ones waiting, and only it reports).
type fanOutRuns struct {
	mu   sync.Mutex
	runs map[string]*fanOutRun
}

func (rs *fanOutRuns) start(upstream forge.Repo, pkg string, followers []forge.Repo) *fanOutRun {
	run := &fanOutRun{upstream: upstream, pkg: pkg, progress: map[string]string{}, left: len(followers), lastReport: time.Now()}
	for _, r := range followers {
		run.progress[r.FullName] = "queued"
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.runs == nil {
		rs.runs = map[string]*fanOutRun{}
	}
	rs.runs[run.reportKey()] = run
	return run
}

// current reports whether run is its package's newest fan-out.
func (rs *fanOutRuns) current(run *fanOutRun) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.runs[run.reportKey()] == run
}

// jobKey names a follower's job for this package: a newer revision's job
// replaces a waiting older one (both bring the follower to the newest).
func (run *fanOutRun) jobKey() string {
	return "fan-out " + RepoKey(run.upstream) + " " + run.pkg
}

// reportKey names the progress report on the upstream: one waits at most.
func (run *fanOutRun) reportKey() string {
	return "fan-out report " + RepoKey(run.upstream) + " " + run.pkg
}

// record sets a follower's state and reports whether the dashboard is
// due: the last follower is done, or the last report is old.
func (run *fanOutRun) record(repo, state string) bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	if prev, ok := run.progress[repo]; !ok || prev == "queued" {
		run.left--
	}
	run.progress[repo] = state
	if run.left <= 0 || time.Since(run.lastReport) >= fanOutReportEvery {
		run.lastReport = time.Now()
		return true
	}
	return false
}

// snapshot is the progress so far.
func (run *fanOutRun) snapshot() map[string]string {
	run.mu.Lock()
	defer run.mu.Unlock()
	return maps.Clone(run.progress)
}

// openChangeFor is the open change from branch, nil when there is none.
func openChangeFor(ctx context.Context, rc *repoCtx, branch string) (*forge.Change, error) {
	cs, err := rc.f.ListChangesByHead(ctx, rc.repo, branch)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		if cs[i].State == "open" {
			return &cs[i], nil
		}
	}
	return nil, nil
}
