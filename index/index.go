// Package index is the bot's follower index: every repository its forges
// let it see and the kptbot.yaml of each, the reverse index from an
// upstream package to the variants that follow it, the
// PackageVariantSets' expansion over it, the upstream tag cache, and the
// engine's Fetcher for upstreams on those forges. It is a cache, rebuilt
// at resync and refreshed on pushes to default branches; nothing depends
// on it for correctness.
package index

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
)

// indexWorkers bounds the repositories read at once by a full index
// rebuild: enough to finish thousands in minutes, few enough that reads
// stay well inside the forge's primary rate limit (the adapters wait out
// a rate-limit answer).
const indexWorkers = 8

// Refresh re-reads every visible repository's kptbot.yaml, a few
// repositories at a time. Concurrent callers share one rebuild.
func (x *Index) Refresh(ctx context.Context) error {
	asked := time.Now()
	x.rebuild.Lock()
	defer x.rebuild.Unlock()
	x.mu.Lock()
	done := x.repos != nil && x.built.After(asked)
	x.mu.Unlock()
	if done {
		return nil // rebuilt while this caller waited
	}
	var all []Entry
	names := make([]string, 0, len(x.opts.Forges))
	for n := range x.opts.Forges {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := x.opts.Forges[n]
		repos, err := f.ListRepos(ctx)
		if err != nil {
			return fmt.Errorf("listing %s repositories: %w", n, err)
		}
		all = append(all, x.readIndexed(ctx, n, repos)...)
	}
	x.mu.Lock()
	bound := x.bound.bind(all, false)
	x.mu.Unlock()
	ups := x.setUpstreams(ctx, all, bound)
	gen, probs := expandSets(all, ups)
	x.mu.Lock()
	x.repos, x.built, x.generated, x.problems = all, time.Now(), gen, probs
	x.bound = bound
	x.upstreams = ups
	x.mu.Unlock()
	return nil
}

// readIndexed reads the configuration of repos, indexWorkers at a time,
// keeping their order.
func (x *Index) readIndexed(ctx context.Context, forgeName string, repos []forge.Repo) []Entry {
	out := make([]Entry, len(repos))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(indexWorkers, len(repos)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = x.readOne(ctx, forgeName, repos[i])
			}
		}()
	}
	for i := range repos {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// readOne is one repository's index entry (no config when it has none or
// an invalid one).
func (x *Index) readOne(ctx context.Context, forgeName string, r forge.Repo) Entry {
	if r.Forge == "" {
		r.Forge = forgeName
	}
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	return x.opts.Read(ctx, r)
}

// Repo refreshes one repository's entry (a push to its default
// branch, an installation adding it): its kptbot.yaml is read again and
// the generated variants recomputed, without re-reading every other
// repository. Nothing happens before the first full build.
func (x *Index) Repo(ctx context.Context, r forge.Repo) {
	if _, ok := x.opts.Forges[r.Forge]; !ok {
		return
	}
	x.mu.Lock()
	built := x.repos != nil
	x.mu.Unlock()
	if !built {
		return
	}
	entry := x.readOne(ctx, r.Forge, r)
	x.replace(r, &entry)
}

// Unindex drops a repository (an installation removing it, a rename's
// old name).
func (x *Index) Unindex(r forge.Repo) { x.replace(r, nil) }

// replace puts entry in place of r's (nil: removes it) and
// recomputes what the sets generate, on a copy: snapshots handed out
// earlier stay as they were.
func (x *Index) replace(r forge.Repo, entry *Entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.repos == nil {
		return
	}
	repos := slices.Clone(x.repos)
	i := slices.IndexFunc(repos, func(ix Entry) bool {
		return ix.Repo.Forge == r.Forge && strings.EqualFold(ix.Repo.FullName, r.FullName)
	})
	switch {
	case i >= 0 && entry != nil:
		// An event's copy of the repository may lack visibility and
		// topics (GitLab's push hook has neither): the listing's stand,
		// and an event can only make a repository more private.
		entry.Repo.Private = entry.Repo.Private || repos[i].Repo.Private
		entry.Repo.Topics = repos[i].Repo.Topics
		repos[i] = *entry
	case i >= 0:
		repos = slices.Delete(repos, i, i+1)
	case entry != nil:
		entry.Repo.Private = true // until a listing says otherwise
		repos = append(repos, *entry)
	}
	x.repos = repos
	x.bound = x.bound.bind(repos, true)
	x.generated, x.problems = expandSets(repos, x.upstreams)
}

// Options configures an Index.
type Options struct {
	// Forges are the forges whose repositories are indexed, by name.
	Forges map[string]forge.Resolver
	// Read is one repository's entry: its forge (forge.Unavailable when
	// it cannot be resolved, kept so the failure shows where the
	// repository is used) and its default branch's kptbot.yaml (nil when
	// it has none or an invalid one).
	Read func(ctx context.Context, r forge.Repo) Entry
}

// Index is the bot's view of every repository it can see and the
// kptbot.yaml of each: the reverse index from an upstream package to the
// variants that follow it. It is a cache, rebuilt at resync and refreshed
// on pushes to default branches; nothing depends on it for correctness.
type Index struct {
	opts  Options
	mu    sync.Mutex
	built time.Time
	repos []Entry
	// generated are the PackageVariantSets' variants by target
	// repository (forge + "/" + lower-case full name), expanded once per
	// index so a fan-out to N repositories does not expand N times.
	generated map[string][]generatedVariant
	// problems are set expansion errors, by the set's repository.
	problems map[string][]Problem
	// upstreams are the sets' CEL variable upstream (setKey → object),
	// read at each full rebuild.
	upstreams map[string]config.Object
	// bound is which repository each name the index has seen means
	// (names.go).
	bound bindings
	// rebuild makes concurrent full rebuilds one (see Refresh).
	rebuild sync.Mutex
	// tags: see tags.go.
	tags tagCache
}

// New returns an empty Index: the first Snapshot builds it.
func New(opts Options) *Index { return &Index{opts: opts} }

// Entry is one indexed repository.
type Entry struct {
	F    forge.Forge
	Repo forge.Repo
	Cfg  *config.File // nil when the repository has no (valid) kptbot.yaml
}

// Problem is a set expansion error (always an error), reported to the
// set's repository.
type Problem struct {
	Repo    string
	File    string
	Message string
}

// indexTTL is how long an index serves before a reconcile rebuilds it in
// full; in between, pushes and installation events update it one
// repository at a time (index.go).
const indexTTL = 30 * time.Minute

func genKey(forgeName, repo string) string { return forgeName + "/" + strings.ToLower(repo) }

// Forget makes the next reconcile rebuild the index.
func (x *Index) Forget() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.repos = nil
}

// view is Snapshot with the names' bindings of the same moment.
func (x *Index) view(ctx context.Context) ([]Entry, bindings, error) {
	repos, err := x.Snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return repos, x.bound, nil
}

// Snapshot is every indexed repository, rebuilt first when older than
// indexTTL; the slice is never changed afterwards.
func (x *Index) Snapshot(ctx context.Context) ([]Entry, error) {
	x.mu.Lock()
	fresh := time.Since(x.built) < indexTTL && x.repos != nil
	repos := x.repos
	x.mu.Unlock()
	if fresh {
		return repos, nil
	}
	if err := x.Refresh(ctx); err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.repos, nil
}
