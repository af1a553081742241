package github

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/kptbot/kptbot/forge"
)

func TestETagTransportServesNotModifiedFromCache(t *testing.T) {
	t.Parallel()
	var full, notModified atomic.Int32
	version := atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		etag := fmt.Sprintf(`W/"v%d"`, version.Load())
		if r.Header.Get("If-None-Match") == etag {
			notModified.Add(1)
			w.Header().Set("X-Ratelimit-Remaining", "4999")
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `[{"name":"basens/v%d","commit":{"sha":%q}}]`, version.Load()+1, shaTag1)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(&http.Client{Transport: NewETagTransport(http.DefaultTransport, 1<<20)}, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	site := forge.Repo{FullName: "acme/site-a"}
	for i := range 3 {
		tags, err := c.ListTags(ctx, site)
		if err != nil || len(tags) != 1 || tags[0].Name != "basens/v1" {
			t.Fatalf("read %d: %v, %v", i, tags, err)
		}
	}
	if full.Load() != 1 || notModified.Load() != 2 {
		t.Errorf("full answers %d, 304s %d; want 1 and 2", full.Load(), notModified.Load())
	}
	version.Store(1) // a new tag: the ETag changes and the new body is read
	tags, err := c.ListTags(ctx, site)
	if err != nil || tags[0].Name != "basens/v2" {
		t.Errorf("after a change: %v, %v; want basens/v2", tags, err)
	}
}

func TestETagTransportEvictsBySize(t *testing.T) {
	t.Parallel()
	tr := &etagTransport{max: 100, entries: map[string]etagEntry{}}
	tr.store("a", `"1"`, make([]byte, 60))
	tr.store("b", `"2"`, make([]byte, 30))
	tr.store("c", `"3"`, make([]byte, 30)) // over 100: a goes
	tr.store("huge", `"4"`, make([]byte, 101))
	_, hasA := tr.entries["a"]
	_, hasB := tr.entries["b"]
	_, hasC := tr.entries["c"]
	_, hasHuge := tr.entries["huge"]
	if hasA || !hasB || !hasC || hasHuge || tr.size != 60 {
		t.Errorf("cache holds %d entries, %d bytes; want b and c only (60 bytes)", len(tr.entries), tr.size)
	}
}
