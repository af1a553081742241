package bot

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

// RefreshIndex re-reads every visible repository's kptbot.yaml, a few
// repositories at a time. Concurrent callers share one rebuild.
func (b *Bot) RefreshIndex(ctx context.Context) error {
	asked := time.Now()
	b.index.rebuild.Lock()
	defer b.index.rebuild.Unlock()
	b.index.mu.Lock()
	done := b.index.repos != nil && b.index.built.After(asked)
	b.index.mu.Unlock()
	if done {
		return nil // rebuilt while this caller waited
	}
	var all []indexed
	names := make([]string, 0, len(b.opts.Forges))
	for n := range b.opts.Forges {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := b.opts.Forges[n]
		repos, err := f.ListRepos(ctx)
		if err != nil {
			return fmt.Errorf("listing %s repositories: %w", n, err)
		}
		all = append(all, b.readIndexed(ctx, n, repos)...)
	}
	ups := b.setUpstreams(ctx, all)
	gen, probs := expandSets(all, ups)
	b.index.mu.Lock()
	b.index.repos, b.index.built, b.index.generated, b.index.problems = all, time.Now(), gen, probs
	b.index.upstreams = ups
	b.index.mu.Unlock()
	return nil
}

// readIndexed reads the configuration of repos, indexWorkers at a time,
// keeping their order.
func (b *Bot) readIndexed(ctx context.Context, forgeName string, repos []forge.Repo) []indexed {
	out := make([]indexed, len(repos))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(indexWorkers, len(repos)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = b.readOne(ctx, forgeName, repos[i])
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
func (b *Bot) readOne(ctx context.Context, forgeName string, r forge.Repo) indexed {
	if r.Forge == "" {
		r.Forge = forgeName
	}
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	f, err := b.forgeFor(ctx, r)
	if err != nil {
		// Kept, so the failure shows where the repository is used.
		f = forge.Unavailable(err)
	}
	var out Outcome
	rc, err := b.openWith(ctx, f, r, &out)
	ix := indexed{f: f, repo: r}
	if err == nil && rc.cfgPath != "" {
		ix.cfg = rc.cfg
	}
	return ix
}

// indexRepo refreshes one repository's entry (a push to its default
// branch, an installation adding it): its kptbot.yaml is read again and
// the generated variants recomputed, without re-reading every other
// repository. Nothing happens before the first full build.
func (b *Bot) indexRepo(ctx context.Context, r forge.Repo) {
	if _, ok := b.opts.Forges[r.Forge]; !ok {
		return
	}
	b.index.mu.Lock()
	built := b.index.repos != nil
	b.index.mu.Unlock()
	if !built {
		return
	}
	entry := b.readOne(ctx, r.Forge, r)
	b.replaceIndexed(r, &entry)
}

// onRenamed follows a repository renamed or transferred: its entry under
// the old name goes (with the old name's cached tags), the new name is
// read and reconciled like a repository just added, so the variants it
// follows keep coming to it and nothing is sent to the old name.
func (b *Bot) onRenamed(ctx context.Context, ev forge.Event, out *Outcome) error {
	old := forge.Repo{Forge: ev.Forge, FullName: ev.From}
	r := ev.Repo
	r.Forge = ev.Forge
	b.unindexRepo(old)
	b.forgetTags(old)
	b.indexRepo(ctx, r)
	if s := SchedulerFrom(ctx); s != nil {
		s.Resync(r) // in r's own serialization
		return nil
	}
	o, err := b.Reconcile(ctx, r)
	out.Add(o)
	return err
}

// unindexRepo drops a repository (an installation removing it).
func (b *Bot) unindexRepo(r forge.Repo) { b.replaceIndexed(r, nil) }

// replaceIndexed puts entry in place of r's (nil: removes it) and
// recomputes what the sets generate, on a copy: snapshots handed out
// earlier stay as they were.
func (b *Bot) replaceIndexed(r forge.Repo, entry *indexed) {
	b.index.mu.Lock()
	defer b.index.mu.Unlock()
	if b.index.repos == nil {
		return
	}
	repos := slices.Clone(b.index.repos)
	i := slices.IndexFunc(repos, func(ix indexed) bool {
		return ix.repo.Forge == r.Forge && strings.EqualFold(ix.repo.FullName, r.FullName)
	})
	switch {
	case i >= 0 && entry != nil:
		// An event's copy of the repository may lack visibility and
		// topics (GitLab's push hook has neither): the listing's stand,
		// and an event can only make a repository more private.
		entry.repo.Private = entry.repo.Private || repos[i].repo.Private
		entry.repo.Topics = repos[i].repo.Topics
		repos[i] = *entry
	case i >= 0:
		repos = slices.Delete(repos, i, i+1)
	case entry != nil:
		entry.repo.Private = true // until a listing says otherwise
		repos = append(repos, *entry)
	}
	b.index.repos = repos
	b.index.generated, b.index.problems = expandSets(repos, b.index.upstreams)
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

// listTags is f.ListTags(r) through the cache.
func (b *Bot) listTags(ctx context.Context, f forge.RefLister, r forge.Repo) ([]forge.Tag, error) {
	k := RepoKey(r)
	c := &b.tags
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

// forgetTags drops r's cached tags (a tag was pushed or deleted).
func (b *Bot) forgetTags(r forge.Repo) {
	b.tags.mu.Lock()
	defer b.tags.mu.Unlock()
	delete(b.tags.entries, RepoKey(r))
}

// tagAmong finds the first of names among upstream's tags (sha "" when
// none is there). A cached list without any of them may be stale (another
// replica got the tag's webhook), so it is asked for once more.
func (ff *forgeFetcher) tagAmong(ctx context.Context, ix indexed, names ...string) (ref, sha string, err error) {
	for fresh := false; ; fresh = true {
		if fresh {
			ff.b.forgetTags(ix.repo)
		}
		tags, err := ff.b.listTags(ctx, ix.f, ix.repo)
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
