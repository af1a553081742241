package sources

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/fetch/oci"
	"github.com/kptbot/kptbot/internal/ocitest"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestCredentialsAreScopedToTheirHosts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env map[string]string
		msg string
	}{
		{map[string]string{EnvRegistryToken: "t"}, EnvRegistryHosts + " is not"},
		{map[string]string{EnvRegistryUsername: "u", EnvRegistryHosts: "r.example"}, "must be set together"},
		{map[string]string{EnvArchiveToken: "t"}, EnvArchiveHosts + " is not"},
		{map[string]string{EnvMaxBytes: "lots"}, EnvMaxBytes + `="lots": expected a positive integer`},
	} {
		if _, err := New(Options{Getenv: env(tc.env)}); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("New with %v: %v, want %q", tc.env, err, tc.msg)
		}
	}
	kc, err := envKeychain(env(map[string]string{EnvRegistryToken: "s3cret", EnvRegistryHosts: "ghcr.io, registry.example:5000"}))
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{"ghcr.io": true, "registry.example:5000": true, "evil.example": false, "docker.io": false} {
		reg, _ := name.NewRegistry(host)
		a, err := kc.Resolve(reg)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := a.Authorization()
		if got := cfg.RegistryToken == "s3cret"; got != want || (!want && a != authn.Anonymous) {
			t.Errorf("credentials for %s: %v, want %v", host, got, want)
		}
	}
}

func TestFetchRoutesByStore(t *testing.T) {
	t.Parallel()
	host := ocitest.MemRegistry(t)
	c, err := New(Options{Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	files := map[string][]byte{"Kptfile": []byte(ocitest.Kptfile("p"))}
	if _, err := c.OCI.Push(ctx, "oci://"+host+"/r", "/p", "v3", files, oci.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	srv := ocitest.NewArchiveServer(t, map[string][]byte{"/p-v1.tgz": ocitest.TarGz(t, ocitest.Entry{Name: "Kptfile", Body: ocitest.Kptfile("p")})})
	if v, err := c.Latest(ctx, "oci://"+host+"/r", "/p", nil); err != nil || v != "v3" {
		t.Fatalf("OCI latest = %q, %v", v, err)
	}
	if v, err := c.Latest(ctx, srv.URL+"/p-"+locator.VersionPlaceholder+".tgz", "/", []string{"v1", "v2"}); err != nil || v != "v1" {
		t.Fatalf("archive latest = %q, %v", v, err)
	}
	if _, res, err := c.Fetch(ctx, srv.URL+"/p-{version}.tgz", "/", "v1"); err != nil || !locator.IsDigest(res.Commit) {
		t.Fatalf("archive fetch = %+v, %v", res, err)
	}
	if _, _, err := c.Fetch(ctx, t.TempDir(), "/", ""); err == nil || !strings.Contains(err.Error(), "no git repository") {
		t.Fatalf("a local path goes to git: %v", err)
	}
}
