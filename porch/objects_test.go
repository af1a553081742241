package porch

import "testing"

func TestObjectNames(t *testing.T) {
	for _, tc := range []struct{ repo, pkg, ws, pkgName, revName string }{
		{"deploy", "team-a", "v1", "deploy.team-a", "deploy.team-a.v1"},
		{"deploy", "sites/edge/team-a", "upgrade", "deploy.sites.edge.team-a", "deploy.sites.edge.team-a.upgrade"},
		// Porch joins and cleans the path first.
		{"blueprints", "/catalog//basens/", "main", "blueprints.catalog.basens", "blueprints.catalog.basens.main"},
	} {
		if got := PackageName(tc.repo, tc.pkg); got != tc.pkgName {
			t.Errorf("PackageName(%q, %q) = %q, want %q", tc.repo, tc.pkg, got, tc.pkgName)
		}
		if got := PackageRevisionName(tc.repo, tc.pkg, tc.ws); got != tc.revName {
			t.Errorf("PackageRevisionName(%q, %q, %q) = %q, want %q", tc.repo, tc.pkg, tc.ws, got, tc.revName)
		}
	}
}
