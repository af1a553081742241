package fetch

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/internal/gitfixture"
)

func TestResolveLikeKpt(t *testing.T) {
	t.Parallel()
	bare := gitfixture.Blueprints(t)
	ctx := context.Background()
	r, err := Open(ctx, "file://"+strings.TrimSuffix(bare, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	v2 := gitfixture.Git(t, bare, "rev-parse", "basens/v2^{commit}")
	main := gitfixture.Git(t, bare, "rev-parse", "main")
	tests := []struct {
		dir, version string
		want         Resolved
	}{
		{"/basens", "v2", Resolved{Ref: "basens/v2", Commit: v2}},
		{"/basens", "basens/v2", Resolved{Ref: "basens/v2", Commit: v2}},
		{"/basens", "main", Resolved{Ref: "main", Commit: main}},
		{"/basens", "", Resolved{Ref: "main", Commit: main}},
		{"/basens", v2[:10], Resolved{Ref: v2[:10], Commit: v2}},
		{"/basens", v2, Resolved{Ref: v2, Commit: v2}},
	}
	for _, tc := range tests {
		got, err := r.Resolve(ctx, tc.dir, tc.version)
		if err != nil {
			t.Fatalf("Resolve(%q, %q): %v", tc.dir, tc.version, err)
		}
		if got != tc.want {
			t.Errorf("Resolve(%q, %q) = %+v, want %+v", tc.dir, tc.version, got, tc.want)
		}
	}
	if _, err := r.Resolve(ctx, "/basens", "v9"); !errors.Is(err, ErrRefNotFound) || !strings.Contains(err.Error(), "basens/v9") {
		t.Errorf("Resolve(v9) error = %v, want ErrRefNotFound naming basens/v9", err)
	}
	files, err := r.Tree(ctx, v2, "/basens")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files["resourcequota.yaml"]; !ok || len(files) != 4 {
		t.Errorf("Tree(basens@v2) = %d files, want Kptfile, README.md, namespace.yaml, resourcequota.yaml", len(files))
	}
	if _, err := r.Tree(ctx, v2, "/nope"); err == nil || !strings.Contains(err.Error(), `"/nope" does not exist`) {
		t.Errorf("Tree(/nope) error = %v", err)
	}
}

func TestFetchOverHTTP(t *testing.T) {
	t.Parallel()
	bare := gitfixture.Blueprints(t)
	srv := gitfixture.HTTPServer(t, filepath.Dir(bare))
	c := NewClient()
	// Recorded without ".git", as kpt does; the client adds it.
	files, res, err := c.Fetch(context.Background(), srv.URL+"/blueprints", "/basens", "v3")
	if err != nil {
		t.Fatal(err)
	}
	if res.Ref != "basens/v3" || !strings.Contains(string(files["resourcequota.yaml"]), `cpu: "50"`) {
		t.Errorf("Fetch over HTTP: ref %q, resourcequota.yaml %q", res.Ref, files["resourcequota.yaml"])
	}
	if _, err := Open(context.Background(), srv.URL+"/missing"); err == nil {
		t.Error("Open(missing repo) succeeded")
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	got := redact("https://x:secret-token@host/repo.git")
	if strings.Contains(got, "secret-token") {
		t.Errorf("redact leaked the token: %s", got)
	}
}
