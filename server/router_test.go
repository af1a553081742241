package server

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRoutersBuiltConcurrently: servers built side by side (replicas in
// one process, parallel tests) set gin's process-wide mode; gin v1.10
// keeps it in a plain global, so under the race detector (make
// test-race) this fails unless the mode is set once.
func TestRoutersBuiltConcurrently(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			New(Options{Registry: prometheus.NewRegistry()}).Router().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			codes[i] = rec.Code
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("router %d: GET /healthz = %d, want 200", i, c)
		}
	}
}
