package gitrepo

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

// TestRemoteReadTreeOverHTTP reads packages over git http-backend by
// branch, tag, a branch tip's SHA (one shallow ref each) and a SHA deep
// in history (a full fetch), and agrees with itself across them.
func TestRemoteReadTreeOverHTTP(t *testing.T) {
	t.Parallel()
	bare := gitfixture.Blueprints(t)
	srv := gitfixture.HTTPServer(t, filepath.Dir(bare))
	rm := Remote{URL: srv.URL + "/" + filepath.Base(bare)}
	ctx := context.Background()
	main := gitfixture.Git(t, bare, "rev-parse", "main")
	old := gitfixture.Git(t, bare, "rev-parse", "main~1")
	v2 := gitfixture.Git(t, bare, "rev-parse", "basens/v2^{commit}")
	for _, tc := range []struct{ ref, want string }{{"main", main}, {main, main}, {"basens/v2", v2}, {old, old}} {
		snap, err := rm.ReadTree(ctx, tc.ref, "basens")
		if err != nil {
			t.Fatalf("ReadTree(%s): %v", tc.ref, err)
		}
		if snap.Commit != tc.want || len(snap.Files) == 0 || snap.Files["Kptfile"] == nil {
			t.Errorf("ReadTree(%s) = %s with %d files, want %s with a Kptfile", tc.ref, snap.Commit, len(snap.Files), tc.want)
		}
	}
	if _, err := rm.ReadTree(ctx, "no-such-ref", ""); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("ReadTree(missing) error = %v, want ErrNotFound", err)
	}
}
