package config

import (
	"strings"
	"testing"
)

// TestUpstreamSources: variants and sets accept OCI and HTTP-archive
// upstreams, and say what is wrong with a malformed one.
func TestUpstreamSources(t *testing.T) {
	t.Parallel()
	const head = "apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: v}\nspec:\n  downstream: {package: d}\n  upstream: "
	const set = "apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariantSet\nmetadata: {name: s}\nspec:\n  targets: [{repositories: [{name: o/a}]}]\n  upstream: "
	dg := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		name, doc, want string
	}{
		{"oci latest", head + "{repo: oci://ghcr.io/org/blueprints, package: basens}", ""},
		{"oci tag", head + "{repo: 'oci://127.0.0.1:5000/bp', package: team/basens, revision: v1.2.0}", ""},
		{"oci digest", head + "{repo: oci://ghcr.io/org/bp, package: basens, revision: '" + dg + "'}", ""},
		{"set oci", set + "{repo: oci://ghcr.io/org/bp, package: basens}", ""},
		{"archive fixed", head + "{repo: 'https://example.com/bp.tar.gz#sha256=" + dg[7:] + "', package: catalog/basens}", ""},
		{"archive template", head + "{repo: 'https://example.com/dl/{version}/bp.zip', package: basens, versions: [v1, v2, 1.3.0]}", ""},
		{"archive template pinned", head + "{repo: 'https://example.com/dl/{version}/bp.zip', package: basens, revision: v2}", ""},
		{"oci tag in repo", head + "{repo: oci://ghcr.io/org/bp:v1, package: basens}", `spec.upstream.repo: "oci://ghcr.io/org/bp:v1": must name the repository only: put "v1" in spec.upstream.revision`},
		{"oci upper case", head + "{repo: oci://ghcr.io/Org/bp, package: basens}", "lower-case"},
		{"oci bad package", head + "{repo: oci://ghcr.io/org/bp, package: Base_NS}", `spec.upstream.package: "Base_NS": names the package's image repository`},
		{"oci bad revision", head + "{repo: oci://ghcr.io/org/bp, package: basens, revision: '>=1.0'}", "expected latest, a tag or a sha256: digest"},
		{"oci versions", head + "{repo: oci://ghcr.io/org/bp, package: basens, versions: [v1]}", "an OCI repository's tags are listed from the registry"},
		{"archive revision without template", head + "{repo: https://example.com/bp.tgz, package: basens, revision: v2}", "needs a {version} placeholder in spec.upstream.repo"},
		{"archive template without versions", set + "{repo: 'https://example.com/{version}/bp.tgz', package: basens}", "spec.upstream.versions: is required"},
		{"archive bad version", head + "{repo: 'https://example.com/{version}/bp.tgz', package: basens, versions: [main]}", `spec.upstream.versions[0]: "main": expected a version`},
		{"archive bad pin", head + "{repo: 'https://example.com/bp.tgz#sha256=abc', package: basens}", "expected #sha256= and 64 hex digits"},
		{"git versions", head + "{repo: https://github.com/org/bp.git, package: basens, versions: [v1]}", "is only for archive URL templates"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("kptbot.yaml", []byte(tc.doc+"\n"))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Parse: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Parse error = %v, want containing %q", err, tc.want)
			}
		})
	}
}
