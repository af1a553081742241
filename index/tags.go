package index

import (
	"context"
	"sync"
	"time"

	"github.com/kptbot/kptbot/forge"
)

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
