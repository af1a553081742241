package locator

import (
	"sort"
	"strings"

	"golang.org/x/mod/semver"
)

// versionKey maps a tag to a comparable semantic version: "v<N>" (Porch's
// revision tags) is v<N>.0.0, "v1.2.3" and "1.2.3" are themselves; any other
// tag is not a version.
func versionKey(tag string) (string, bool) {
	t := tag
	if !strings.HasPrefix(t, "v") {
		t = "v" + t
	}
	if !semver.IsValid(t) {
		return "", false
	}
	return t, true
}

// IsVersion reports whether tag orders as a version (v<N> or semver).
func IsVersion(tag string) bool {
	_, ok := versionKey(tag)
	return ok
}

// CompareVersions orders two version tags by v<N>/semver precedence; ties
// (v2 and v2.0.0) fall back to the strings, so the order is total.
func CompareVersions(a, b string) int {
	ka, _ := versionKey(a)
	kb, _ := versionKey(b)
	if c := semver.Compare(ka, kb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// SortVersions returns the version tags of tags in ascending order; tags
// that are not versions are left out.
func SortVersions(tags []string) []string {
	var out []string
	for _, t := range tags {
		if IsVersion(t) {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return CompareVersions(out[i], out[j]) < 0 })
	return out
}

// LatestVersion is the highest version among tags by v<N> then semver
// ordering. Pre-releases (v2.0.0-rc.1) count only when no release exists,
// so a release candidate is never proposed over a release.
func LatestVersion(tags []string) (string, bool) {
	sorted := SortVersions(tags)
	for i := len(sorted) - 1; i >= 0; i-- {
		k, _ := versionKey(sorted[i])
		if semver.Prerelease(k) == "" {
			return sorted[i], true
		}
	}
	if len(sorted) > 0 {
		return sorted[len(sorted)-1], true
	}
	return "", false
}
