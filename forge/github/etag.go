package github

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"sync"
)

// NewETagTransport answers repeated GETs from a cache when GitHub says
// nothing changed: it sends If-None-Match with the ETag it saw, and on 304
// (which GitHub does not count against the rate limit) replays the stored
// answer. The cache is per transport, so per identity: a token's view is
// never served to another. At most maxBytes of answers are kept, oldest
// dropped first.
func NewETagTransport(next http.RoundTripper, maxBytes int) http.RoundTripper {
	return &etagTransport{next: next, max: maxBytes, entries: map[string]etagEntry{}}
}

// etagEntry is a 200 answer as received, and its ETag.
type etagEntry struct {
	etag string
	dump []byte
}

type etagTransport struct {
	next    http.RoundTripper
	max     int // bytes
	size    int
	mu      sync.Mutex
	entries map[string]etagEntry // Accept + URL → answer
	order   []string
}

func (t *etagTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.Header.Get("If-None-Match") != "" {
		return t.next.RoundTrip(req)
	}
	key := req.Header.Get("Accept") + " " + req.URL.String()
	t.mu.Lock()
	cached, ok := t.entries[key]
	t.mu.Unlock()
	r := req
	if ok {
		r = req.Clone(req.Context())
		r.Header.Set("If-None-Match", cached.etag)
	}
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotModified && ok {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		old, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(cached.dump)), req)
		if err != nil {
			return nil, err
		}
		// Keep the fresh rate-limit headers, the cached body.
		for _, h := range []string{"X-Ratelimit-Remaining", "X-Ratelimit-Reset", "X-Ratelimit-Limit"} {
			if v := resp.Header.Get(h); v != "" {
				old.Header.Set(h, v)
			}
		}
		return old, nil
	}
	if etag := resp.Header.Get("ETag"); resp.StatusCode == http.StatusOK && etag != "" {
		dump, err := httputil.DumpResponse(resp, true)
		if err != nil {
			return nil, err
		}
		t.store(key, etag, dump)
	}
	return resp, nil
}

func (t *etagTransport) store(key, etag string, dump []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(dump) > t.max {
		return
	}
	if old, ok := t.entries[key]; ok {
		t.size -= len(old.dump)
	} else {
		t.order = append(t.order, key)
	}
	t.entries[key] = etagEntry{etag: etag, dump: dump}
	t.size += len(dump)
	for t.size > t.max {
		t.size -= len(t.entries[t.order[0]].dump)
		delete(t.entries, t.order[0])
		t.order = t.order[1:]
	}
}
