package porch

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseRevision(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"v1", 1, true},
		{"v12", 12, true},
		{"v0", 0, true},
		{"v01", 0, false},
		{"v00", 0, false},
		{"v+1", 0, false},
		{"v-1", 0, false},
		{"v", 0, false},
		{"1", 0, false},
		{"V1", 0, false},
		{"v1.2.0", 0, false},
		{"v99999999999999999999999", 0, false},
		{"latest", 0, false},
	} {
		got, ok := ParseRevision(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRevision(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Tag("catalog/basens", 3), "catalog/basens/v3"},
		{TagRef("basens", 1), "refs/tags/basens/v1"},
		{DraftBranch("catalog/gcp/bucket", "v2"), "drafts/catalog/gcp/bucket/v2"},
		{ProposedBranch("a", "ws"), "proposed/a/ws"},
		{DeletionProposedBranch("a/b", 4), "deletionProposed/a/b/v4"},
		{BranchRef(DraftBranch("a", "ws")), "refs/heads/drafts/a/ws"},
		{UpdateBranch("sites/edge"), "drafts/sites/edge/kptbot-update"},
		{RevisionName(0), "v0"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		ref  string
		want RefInfo
		ok   bool
	}{
		// Refs of the Porch-made repositories in Porch's testdata.
		{"refs/heads/drafts/catalog/gcp/bucket/v2", RefInfo{Package: "catalog/gcp/bucket", Workspace: "v2", Lifecycle: Draft}, true},
		{"refs/tags/catalog/namespace/basens/v3", RefInfo{Package: "catalog/namespace/basens", Revision: 3, Lifecycle: Published}, true},
		{"refs/tags/basens/v0", RefInfo{Package: "basens", Revision: 0, Lifecycle: Published}, true},
		{"refs/heads/proposed/a/my-change", RefInfo{Package: "a", Workspace: "my-change", Lifecycle: Proposed}, true},
		{"refs/heads/deletionProposed/a/b/v7", RefInfo{Package: "a/b", Revision: 7, Lifecycle: DeletionProposed}, true},
		{"refs/heads/main", RefInfo{}, false},
		{"refs/heads/blueprint/bp1/v1", RefInfo{}, false},
		{"refs/heads/drafts/a", RefInfo{}, false},
		{"refs/heads/drafts/a/", RefInfo{}, false},
		{"refs/heads/drafts//ws", RefInfo{}, false},
		{"refs/heads/deletionProposed/a/ws", RefInfo{}, false},
		{"refs/tags/v1.2.0", RefInfo{}, false},
		{"refs/tags/v1", RefInfo{}, false},
		{"refs/tags/a/latest", RefInfo{}, false},
		{"refs/tags/a/v01", RefInfo{}, false},
		{"refs/remotes/origin/drafts/a/ws", RefInfo{}, false},
		{"drafts/a/ws", RefInfo{}, false},
		{"a/v1", RefInfo{}, false},
	} {
		got, ok := ParseRef(tc.ref)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v, %v", tc.ref, got, ok, tc.want, tc.ok)
		}
		if ok && got.Ref() != tc.ref {
			t.Errorf("ParseRef(%q).Ref() = %q", tc.ref, got.Ref())
		}
	}
}

func TestParseBranchAndTag(t *testing.T) {
	if info, ok := ParseBranch("drafts/sites/edge/kptbot-update"); !ok || info.Package != "sites/edge" || info.Workspace != UpdateWorkspace || info.Lifecycle != Draft {
		t.Errorf("ParseBranch(update branch) = %+v, %v", info, ok)
	}
	if _, ok := ParseBranch("kptbot/update"); ok {
		t.Error("kptbot/update is not a package revision branch")
	}
	if pkg, n, ok := ParseTag("catalog/basens/v2"); !ok || pkg != "catalog/basens" || n != 2 {
		t.Errorf("ParseTag = %q, %d, %v", pkg, n, ok)
	}
	for _, bad := range []string{"v1", "/v1", "a/v1/", "a/b", "refs/tags/a/v1x"} {
		if _, _, ok := ParseTag(bad); ok {
			t.Errorf("ParseTag(%q) accepted", bad)
		}
	}
}

func TestLatest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pkg   string
		names []string
		want  int
		ok    bool
		next  int
	}{
		{"none", "a", []string{"b/v3", "v9", "a/latest"}, 0, false, 1},
		{"highest, not last", "a", []string{"a/v2", "a/v10", "a/v9"}, 10, true, 11},
		{"v0 is a revision", "a", []string{"a/v0"}, 0, true, 1},
		{"sub-package tags are another package", "a", []string{"a/v1", "a/sub/v9"}, 1, true, 2},
		{"non-canonical revisions are not revisions", "a", []string{"a/v1", "a/v02", "a/v+3"}, 1, true, 2},
		{"full refs", "a", []string{"refs/tags/a/v4", "refs/heads/drafts/a/v9", "refs/heads/deletionProposed/a/v8", "refs/remotes/origin/a/v7"}, 4, true, 5},
		{"nested package", "catalog/basens", []string{"catalog/basens/v1", "catalog/basens/v3", "basens/v5"}, 3, true, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Latest(tc.pkg, tc.names)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Latest = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
			if n := Next(tc.pkg, tc.names); n != tc.next {
				t.Errorf("Next = %d, want %d", n, tc.next)
			}
		})
	}
}

func TestLatestOfIndex(t *testing.T) {
	type ref struct{ name, commit string }
	refs := []ref{{"refs/tags/a/v1", "c1"}, {"refs/tags/a/v3", "c3"}, {"refs/tags/a/v2", "c2"}, {"refs/tags/b/v9", "c9"}}
	n, i := LatestOf("a", refs, func(r ref) string { return r.name })
	if n != 3 || i != 1 || refs[i].commit != "c3" {
		t.Errorf("LatestOf = %d, %d", n, i)
	}
	if n, i := LatestOf("c", refs, func(r ref) string { return r.name }); n != 0 || i != -1 {
		t.Errorf("LatestOf(absent) = %d, %d", n, i)
	}
}

func TestLatestByPackage(t *testing.T) {
	names := []string{"a/v1", "a/v3", "a/v2", "a/sub/v9", "b/v0", "v7", "refs/tags/c/v4", "refs/heads/drafts/d/v5", "e/v01"}
	got := LatestByPackage(names, func(s string) string { return s })
	want := map[string]int{"a": 3, "a/sub": 9, "b": 0, "c": 4}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LatestByPackage = %v, want %v", got, want)
	}
	for pkg, n := range want {
		if m, ok := Latest(pkg, names); !ok || m != n {
			t.Errorf("Latest(%q) = %d, %v; LatestByPackage says %d", pkg, m, ok, n)
		}
	}
}

func TestCheckNames(t *testing.T) {
	for _, tc := range []struct {
		pkg, ws string
		bad     string // substring of the error, "" for none
	}{
		{"catalog/basens", "v1", ""},
		{"", "v1", "package name"},
		{"/abs", "v1", "package name"},
		{"a/../b", "v1", "package name"},
		{"a/", "v1", "package name"},
		{"a", "", "workspace name"},
		{"a", "x/y", "workspace name"},
	} {
		err := CheckNames(tc.pkg, tc.ws)
		if (err == nil) != (tc.bad == "") || (err != nil && !strings.Contains(err.Error(), tc.bad)) {
			t.Errorf("CheckNames(%q, %q) = %v, want error naming %q", tc.pkg, tc.ws, err, tc.bad)
		}
	}
}

// FuzzParseRef: every ref ParseRef accepts is named back exactly by its
// RefInfo, and the short-name parsers agree with it.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"refs/heads/drafts/a/ws", "refs/tags/a/b/v3", "refs/heads/deletionProposed/a/v0", "refs/heads/proposed/x/y", "refs/tags/v1", "refs/tags/a/v01", "refs/heads/drafts//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		info, ok := ParseRef(ref)
		if !ok {
			if info != (RefInfo{}) {
				t.Fatalf("ParseRef(%q) rejected but returned %+v", ref, info)
			}
			return
		}
		if got := info.Ref(); got != ref {
			t.Fatalf("ParseRef(%q) = %+v, named back as %q", ref, info, got)
		}
		if info.Package == "" || info.Revision < 0 {
			t.Fatalf("ParseRef(%q) = %+v", ref, info)
		}
		switch info.Lifecycle {
		case Published:
			pkg, n, ok := ParseTag(strings.TrimPrefix(ref, TagRefPrefix))
			if !ok || pkg != info.Package || n != info.Revision {
				t.Fatalf("ParseTag disagrees on %q", ref)
			}
		default:
			b, _ := ParseBranch(strings.TrimPrefix(ref, BranchRefPrefix))
			if b != info {
				t.Fatalf("ParseBranch disagrees on %q: %+v", ref, b)
			}
		}
	})
}

// FuzzParseTag: an accepted tag name is Tag(pkg, n) and Latest finds its
// revision.
func FuzzParseTag(f *testing.F) {
	for _, s := range []string{"a/v1", "a/b/v10", "v1", "a/v0", "a/v-1", "a//v2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		pkg, n, ok := ParseTag(name)
		if !ok {
			return
		}
		if Tag(pkg, n) != name {
			t.Fatalf("ParseTag(%q) = %q, %d; Tag gives %q", name, pkg, n, Tag(pkg, n))
		}
		if strings.HasPrefix(name, "refs/") {
			return // a full ref is read as one by Latest
		}
		if got, ok := Latest(pkg, []string{name}); !ok || got != n {
			t.Fatalf("Latest(%q, [%q]) = %d, %v", pkg, name, got, ok)
		}
	})
}
