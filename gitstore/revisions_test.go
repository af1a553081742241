package gitstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/porch"
)

func TestRepositoryName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ repo, name string }{
		{"/srv/git/deploy.git", "deploy"},
		{"/srv/git/deploy.git/", "deploy"},
		{"file:///srv/blueprints", "blueprints"},
		{"https://github.com/acme/edge-1.git", "edge-1"},
		{"catalog.git", "catalog"},
		{`C:\git\site.git`, "site"},
	} {
		if got := RepositoryName(tc.repo); got != tc.name {
			t.Errorf("RepositoryName(%q) = %q, want %q", tc.repo, got, tc.name)
		}
	}
}

// rev is a package revision as List reads it from a ref.
func rev(ref string, trailerWS string) PackageRevision {
	var info porch.RefInfo
	if name, ok := strings.CutPrefix(ref, "refs/tags/"); ok {
		pkg, n, _ := porch.ParseTag(name)
		info = porch.RefInfo{Package: pkg, Revision: n, Lifecycle: porch.Published}
	} else {
		info, _ = porch.ParseBranch(strings.TrimPrefix(ref, "refs/heads/"))
	}
	r := PackageRevision{RefInfo: info, Ref: ref, Commit: "c-" + ref}
	if trailerWS != "" {
		r.Trailer = &porch.Trailer{Package: info.Package, WorkspaceName: trailerWS}
	}
	return r
}

func TestListingRevisions(t *testing.T) {
	t.Parallel()
	type row struct {
		Name, Workspace string
		Revision        int
		Latest          bool
		Lifecycle       porch.Lifecycle
	}
	tests := []struct {
		name string
		pkg  Package
		want []row
	}{{
		name: "published in order, then drafts and proposals by workspace",
		pkg: Package{Name: "ns", Published: true, Latest: 2, Revisions: []PackageRevision{
			rev("refs/heads/proposed/ns/b", ""), rev("refs/tags/ns/v2", "w2"), rev("refs/heads/drafts/ns/a", ""), rev("refs/tags/ns/v1", "w1"),
		}},
		want: []row{
			{"deploy.ns.w1", "w1", 1, false, porch.Published},
			{"deploy.ns.w2", "w2", 2, true, porch.Published},
			{"deploy.ns.a", "a", 0, false, porch.Draft},
			{"deploy.ns.b", "b", 0, false, porch.Proposed},
		},
	}, {
		name: "a tag Porch did not write is named by its revision; v0 is a revision",
		pkg:  Package{Name: "team/db", Published: true, Latest: 0, Revisions: []PackageRevision{rev("refs/tags/team/db/v0", "")}},
		want: []row{{"deploy.team.db.v0", "v0", 0, true, porch.Published}},
	}, {
		name: "a revision proposed for deletion is one row",
		pkg: Package{Name: "ns", Published: true, Latest: 1, Revisions: []PackageRevision{
			rev("refs/heads/deletionProposed/ns/v1", "w"), rev("refs/tags/ns/v1", "w"),
		}},
		want: []row{{"deploy.ns.w", "w", 1, true, porch.DeletionProposed}},
	}, {
		name: "a revision proposed for deletion is one row, whichever ref comes first",
		pkg: Package{Name: "ns", Published: true, Latest: 1, Revisions: []PackageRevision{
			rev("refs/tags/ns/v1", "w"), rev("refs/heads/deletionProposed/ns/v1", "w"),
		}},
		want: []row{{"deploy.ns.w", "w", 1, true, porch.DeletionProposed}},
	}, {
		name: "only drafts: nothing is latest",
		pkg:  Package{Name: "ns", Revisions: []PackageRevision{rev("refs/heads/drafts/ns/v1", "")}},
		want: []row{{"deploy.ns.v1", "v1", 0, false, porch.Draft}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &Listing{Packages: []Package{tc.pkg}}
			var got []row
			for _, r := range l.Revisions("deploy") {
				if r.Repository != "deploy" || r.Package != tc.pkg.Name || !strings.HasPrefix(r.Commit, "c-") {
					t.Errorf("row %+v: wrong repository, package or commit", r)
				}
				got = append(got, row{r.Name, r.Workspace, r.Revision, r.Latest, r.Lifecycle})
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Revisions (-want +got):\n%s", d)
			}
		})
	}
}

func TestResolveName(t *testing.T) {
	t.Parallel()
	rows := []Revision{
		{Name: "deploy.ns.w", Package: "ns", Workspace: "w", Revision: 1, Lifecycle: porch.Published},
		{Name: "deploy.ns.draft", Package: "ns", Workspace: "draft", Lifecycle: porch.Draft},
		{Name: "deploy.app.v2.x", Package: "app.v2", Workspace: "x", Lifecycle: porch.Draft},
	}
	tests := []struct {
		arg, pkg, rowName, err string
	}{
		{arg: "deploy.ns.w", pkg: "ns", rowName: "deploy.ns.w"},
		{arg: "deploy.ns.draft", pkg: "ns", rowName: "deploy.ns.draft"},
		{arg: "app.v2", pkg: "app.v2"}, // a package with a dot is a package
		{arg: "other.ns.w", err: `names in repository /srv/deploy.git start with "deploy."`},
		{arg: "deploy.ns.gone", err: `no package revision "deploy.ns.gone" in /srv/deploy.git`},
	}
	for _, tc := range tests {
		pkg, row, err := resolveName(rows, "/srv/deploy.git", tc.arg)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrNotFound) {
				t.Errorf("resolveName(%q) = %v, want ErrNotFound saying %q", tc.arg, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("resolveName(%q): %v", tc.arg, err)
			continue
		}
		gotRow := ""
		if row != nil {
			gotRow = row.Name
		}
		if pkg != tc.pkg || gotRow != tc.rowName {
			t.Errorf("resolveName(%q) = %q, row %q; want %q, row %q", tc.arg, pkg, gotRow, tc.pkg, tc.rowName)
		}
	}
}

func TestRevisionObject(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		row    Revision
		labels map[string]string
	}{
		{Revision{Name: "d.ns.w", Package: "ns", Workspace: "w", Revision: 3, Latest: true, Lifecycle: porch.Published, Repository: "d", Commit: "abc"},
			map[string]string{"kpt.dev/latest-revision": "true"}},
		{Revision{Name: "d.ns.x", Package: "ns", Workspace: "x", Lifecycle: porch.Draft, Repository: "d", Commit: "def"}, nil},
	} {
		o := tc.row.Object()
		if o.APIVersion != "porch.kpt.dev/v1alpha1" || o.Kind != "PackageRevision" || o.Metadata.Name != tc.row.Name ||
			o.Metadata.Annotations["kptbot.dev/commit"] != tc.row.Commit || !cmp.Equal(o.Metadata.Labels, tc.labels) ||
			o.Spec.PackageName != tc.row.Package || o.Spec.WorkspaceName != tc.row.Workspace || o.Spec.Repository != tc.row.Repository ||
			o.Spec.Revision != tc.row.Revision || o.Spec.Lifecycle != string(tc.row.Lifecycle) {
			t.Errorf("Object of %+v = %+v", tc.row, o)
		}
	}
}

func kptfile(upstream string) kptpkg.Tree {
	return kptpkg.Tree{kptpkg.KptfileName: []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ns\n" + upstream)}
}

func gitUpstream(ref, strategy string) string {
	s := "upstream:\n  type: git\n  git:\n    repo: https://example.com/bp.git\n    directory: /basens\n    ref: " + ref + "\n"
	if strategy != "" {
		s += "  updateStrategy: " + strategy + "\n"
	}
	return s
}

func TestUpgradeTask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		before, after  kptpkg.Tree
		strategy, want string
	}{{
		name:   "the Kptfile's strategy",
		before: kptfile(gitUpstream("basens/v1", "fast-forward")), after: kptfile(gitUpstream("basens/v2", "fast-forward")),
		want: `{"type":"upgrade","upgrade":{"oldUpstreamRef":{"name":"https://example.com/bp.git/basens@basens/v1"},"newUpstreamRef":{"name":"https://example.com/bp.git/basens@basens/v2"},"localPackageRevisionRef":{"name":"ns/v3"},"strategy":"fast-forward"}}`,
	}, {
		name:   "the strategy asked for wins",
		before: kptfile(gitUpstream("v1", "fast-forward")), after: kptfile(gitUpstream("v2", "fast-forward")), strategy: "copy-merge",
		want: `{"type":"upgrade","upgrade":{"oldUpstreamRef":{"name":"https://example.com/bp.git/basens@v1"},"newUpstreamRef":{"name":"https://example.com/bp.git/basens@v2"},"localPackageRevisionRef":{"name":"ns/v3"},"strategy":"copy-merge"}}`,
	}, {
		name:   "Porch's default; an unreadable Kptfile has no upstream",
		before: kptpkg.Tree{kptpkg.KptfileName: []byte("{")}, after: kptfile(gitUpstream("v2", "")),
		want: `{"type":"upgrade","upgrade":{"oldUpstreamRef":{"name":""},"newUpstreamRef":{"name":"https://example.com/bp.git/basens@v2"},"localPackageRevisionRef":{"name":"ns/v3"},"strategy":"resource-merge"}}`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(upgradeTask(tc.before, tc.after, "ns/v3", tc.strategy).JSON()); got != tc.want {
				t.Errorf("upgradeTask =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
