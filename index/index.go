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
	ups := x.setUpstreams(ctx, all)
	gen, probs := expandSets(all, ups)
	x.mu.Lock()
	x.repos, x.built, x.generated, x.problems = all, time.Now(), gen, probs
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
	x.generated, x.problems = expandSets(repos, x.upstreams)
}

// tagTTL is how long a repository's tag list is reused. A tag webhook
// forgets it at once; the TTL bounds how stale another replica's view (or
// one whose webhook was lost) can be, while a resync over thousands of
// followers of one upstream lists its tags a few times, not thousands.
const tagTTL = 5 * time.Second

// tagCache holds tag lists by repository.
type tagCache struct {
	mu      sync.Mutex
	entries map[string]tagEntry
}

type tagEntry struct {
	tags []forge.Tag
	at   time.Time
}

// ListTags is f.ListTags(r) through the cache.
func (x *Index) ListTags(ctx context.Context, f forge.RefLister, r forge.Repo) ([]forge.Tag, error) {
	k := genKey(r.Forge, r.FullName)
	c := &x.tags
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && time.Since(e.at) < tagTTL {
		return e.tags, nil
	}
	tags, err := f.ListTags(ctx, r)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]tagEntry{}
	}
	c.entries[k] = tagEntry{tags: tags, at: time.Now()}
	return tags, nil
}

// ForgetTags drops r's cached tags (a tag was pushed or deleted).
func (x *Index) ForgetTags(r forge.Repo) {
	x.tags.mu.Lock()
	defer x.tags.mu.Unlock()
	delete(x.tags.entries, genKey(r.Forge, r.FullName))
}

// tagAmong finds the first of names among upstream's tags (sha "" when
// none is there). A cached list without any of them may be stale (another
// replica got the tag's webhook), so it is asked for once more.
func (ff *Fetcher) tagAmong(ctx context.Context, ix Entry, names ...string) (ref, sha string, err error) {
	for fresh := false; ; fresh = true {
		if fresh {
			ff.x.ForgetTags(ix.Repo)
		}
		tags, err := ff.x.ListTags(ctx, ix.F, ix.Repo)
		if err != nil {
			return "", "", err
		}
		for _, n := range names {
			for _, t := range tags {
				if t.Name == n {
					return n, t.SHA, nil
				}
			}
		}
		if fresh {
			return "", "", nil
		}
	}
}
