package reconcile

import (
	"context"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/fetch/oci"
	"github.com/kptbot/kptbot/fetch/sources"
	"github.com/kptbot/kptbot/gitstore"
	"github.com/kptbot/kptbot/internal/gitfixture"
	"github.com/kptbot/kptbot/internal/ocitest"
)

// blueprint is version n of a small upstream package.
func blueprint(n string) map[string]string {
	return map[string]string{
		"Kptfile":        ocitest.Kptfile("basens"),
		"namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n",
		"config.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  version: \"" + n + "\"\n",
	}
}

func bytesOf(m map[string]string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

func lockOf(t *testing.T, bare, rev string) *kptpkg.Lock {
	t.Helper()
	kf, err := kptpkg.DecodeKptfile("Kptfile", []byte(gitfixture.Git(t, bare, "show", rev+":team-a/Kptfile")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := kptpkg.LockOf(kf)
	if err != nil || l == nil {
		t.Fatalf("lock on %s: %+v, %v", rev, l, err)
	}
	return l
}

// TestReconcileFollowsOCIUpstream: a variant following an OCI package is
// cloned from its highest tag, and gets an update draft on plain git when
// a new tag appears. It runs against go-containerregistry's in-memory
// registry and against the real distribution registry.
func TestReconcileFollowsOCIUpstream(t *testing.T) {
	t.Parallel()
	for name, start := range map[string]func(testing.TB) string{"memory": ocitest.MemRegistry, "docker-registry": ocitest.RealRegistry} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			host := start(t)
			repo := "oci://" + host + "/blueprints"
			src, err := sources.New(sources.Options{Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			d1, err := src.OCI.Push(ctx, repo, "/basens", "v1", bytesOf(blueprint("1")), oci.PushOptions{})
			if err != nil {
				t.Fatal(err)
			}
			bare := downstreamRepo(t, repo, kptbotYAML)
			reconcile := func() []Action {
				t.Helper()
				s, err := gitstore.OpenStore(ctx, bare, "main")
				if err != nil {
					t.Fatal(err)
				}
				plan, err := Run(ctx, s, "main", Options{Sources: src})
				if err != nil {
					t.Fatal(err)
				}
				return plan
			}
			plan := reconcile()
			if kinds(plan) != "create-draft" || plan[0].Workspace != "team-a-v1" || plan[0].Why != "clone "+repo+"//basens:v1" {
				t.Fatalf("first plan = %+v", plan)
			}
			if l := lockOf(t, bare, "drafts/team-a/team-a-v1"); l.Commit != d1 || l.Store != "oci" {
				t.Fatalf("draft lock = %+v, want %s", l, d1)
			}
			if ns := gitfixture.Git(t, bare, "show", "drafts/team-a/team-a-v1:team-a/config.yaml"); !strings.Contains(ns, "namespace: team-a") {
				t.Fatalf("draft not rendered with the variant's pipeline:\n%s", ns)
			}
			s, _ := gitstore.OpenStore(ctx, bare, "main")
			if err := s.Propose(ctx, "team-a", "team-a-v1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Approve(ctx, "team-a", "team-a-v1"); err != nil {
				t.Fatal(err)
			}
			if got := kinds(reconcile()); got != "none" {
				t.Fatalf("after publishing = %s, want none", got)
			}

			d2, err := src.OCI.Push(ctx, repo, "/basens", "v2", bytesOf(blueprint("2")), oci.PushOptions{})
			if err != nil {
				t.Fatal(err)
			}
			plan = reconcile()
			if kinds(plan) != "create-draft" || plan[0].Workspace != "team-a-v2" || !strings.Contains(plan[0].Why, "upgrade to "+repo+"//basens:v2") {
				t.Fatalf("plan after v2 = %+v", plan)
			}
			if l := lockOf(t, bare, "drafts/team-a/team-a-v2"); l.Commit != d2 || l.Ref != "v2" {
				t.Fatalf("update draft lock = %+v, want v2 at %s", l, d2)
			}
			cfg := gitfixture.Git(t, bare, "show", "drafts/team-a/team-a-v2:team-a/config.yaml")
			if !strings.Contains(cfg, `version: "2"`) || !strings.Contains(cfg, "namespace: team-a") {
				t.Fatalf("update draft config.yaml:\n%s", cfg)
			}
			if got := kinds(reconcile()); got != "none" {
				t.Fatalf("second run after v2 = %s, want none (idempotent)", got)
			}
		})
	}
}

// TestReconcileFollowsArchiveTemplate: an HTTP upstream with a {version}
// template follows the highest listed version that exists.
func TestReconcileFollowsArchiveTemplate(t *testing.T) {
	t.Parallel()
	tgz := func(n string) []byte { return ocitest.TarGz(t, ocitest.Files(blueprint(n))...) }
	srv := ocitest.NewArchiveServer(t, map[string][]byte{"/bp-v1.tgz": tgz("1")})
	cfg := strings.Replace(kptbotYAML, "upstream: {repo: UPSTREAM, package: basens}", "upstream: {repo: 'UPSTREAM', package: /, versions: [v1, v2, v3]}", 1)
	bare := downstreamRepo(t, srv.URL+"/bp-{version}.tgz", cfg)
	if plan := run(t, bare, false); kinds(plan) != "create-draft" || plan[0].Workspace != "team-a-v1" {
		t.Fatalf("first plan = %+v", plan)
	}
	srv.Set("/bp-v2.tgz", tgz("2"))
	plan := run(t, bare, false)
	if kinds(plan) != "update-draft" || plan[0].Workspace != "team-a-v1" || plan[0].Why != "clone "+srv.URL+"/bp-{version}.tgz@v2" {
		t.Fatalf("plan after v2 appeared = %s %q, want the open draft recloned at v2", kinds(plan), plan[0].Why)
	}
	if c := gitfixture.Git(t, bare, "show", "drafts/team-a/team-a-v1:team-a/config.yaml"); !strings.Contains(c, `version: "2"`) {
		t.Fatalf("draft config.yaml:\n%s", c)
	}
}
