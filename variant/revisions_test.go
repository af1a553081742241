package variant

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/pkgmerge"
	"github.com/kptbot/kptbot/fetch/locator"
	"github.com/kptbot/kptbot/porch"
)

func pvFor(name, pkg, adoption, deletion string) config.PackageVariant {
	return config.PackageVariant{Metadata: config.ObjectMeta{Name: name}, Spec: config.PackageVariantSpec{
		Downstream: &config.Downstream{Package: pkg}, AdoptionPolicy: adoption, DeletionPolicy: deletion,
	}}
}

func describe(ds []Decision) string {
	var s []string
	for _, d := range ds {
		line := fmt.Sprintf("%s/%s %s", d.Package, d.Name, d.Kind)
		if d.Variant != "" {
			line += " by " + d.Variant
		}
		if d.Adopted {
			line += " (adopted)"
		}
		s = append(s, line)
	}
	return strings.Join(s, "; ")
}

// The cases follow Porch's packagevariant controller tests for
// getDownstreamPRs and deleteOrOrphan.
func TestDecide(t *testing.T) {
	t.Parallel()
	draft := func(pkg, ws, owner, policy string) Revision {
		return Revision{Package: pkg, Name: ws, Lifecycle: porch.Draft, Owner: owner, DeletionPolicy: policy}
	}
	proposed := func(pkg, ws, owner string) Revision {
		return Revision{Package: pkg, Name: ws, Lifecycle: porch.Proposed, Owner: owner}
	}
	published := func(pkg, tag, owner, policy string) Revision {
		return Revision{Package: pkg, Name: tag, Lifecycle: porch.Published, Owner: owner, DeletionPolicy: policy}
	}
	for _, tc := range []struct {
		name     string
		variants []config.PackageVariant
		revs     []Revision
		want     string
	}{{
		name:     "own draft kept",
		variants: []config.PackageVariant{pvFor("a", "pkg-a", "", "delete")},
		revs:     []Revision{draft("pkg-a", "ws1", "a", "delete"), published("pkg-a", "pkg-a/v1", "a", "delete")},
		want:     "pkg-a/ws1 edit by a",
	}, {
		name: "variant removed: drafts and proposals deleted, published deletion proposed",
		revs: []Revision{draft("pkg-a", "ws1", "a", "delete"), proposed("pkg-a", "ws2", "a"), published("pkg-a", "pkg-a/v1", "a", "delete")},
		want: "pkg-a/pkg-a/v1 delete; pkg-a/ws1 delete; pkg-a/ws2 delete",
	}, {
		name: "variant removed with orphan: all kept",
		revs: []Revision{draft("pkg-a", "ws1", "a", "orphan"), published("pkg-a", "pkg-a/v1", "a", "orphan")},
		want: "pkg-a/pkg-a/v1 orphan; pkg-a/ws1 orphan",
	}, {
		name:     "downstream changed: old drafts deleted, published left",
		variants: []config.PackageVariant{pvFor("a", "pkg-b", "", "delete")},
		revs:     []Revision{draft("pkg-a", "ws1", "a", "delete"), published("pkg-a", "pkg-a/v1", "a", "delete")},
		want:     "pkg-a/ws1 delete",
	}, {
		name:     "downstream changed with orphan",
		variants: []config.PackageVariant{pvFor("a", "pkg-b", "", "orphan")},
		revs:     []Revision{draft("pkg-a", "ws1", "a", "delete")},
		want:     "pkg-a/ws1 orphan",
	}, {
		name:     "adoptExisting adopts an unowned draft",
		variants: []config.PackageVariant{pvFor("a", "pkg-a", "adoptExisting", "delete")},
		revs:     []Revision{draft("pkg-a", "hand", "", ""), draft("pkg-b", "other", "", "")},
		want:     "pkg-a/hand edit by a (adopted)",
	}, {
		name:     "adoptNone leaves an unowned draft",
		variants: []config.PackageVariant{pvFor("a", "pkg-a", "adoptNone", "delete")},
		revs:     []Revision{draft("pkg-a", "hand", "", "")},
		want:     "",
	}, {
		name:     "an owned draft beats adoption",
		variants: []config.PackageVariant{pvFor("a", "pkg-a", "adoptExisting", "delete")},
		revs:     []Revision{draft("pkg-a", "hand", "", ""), draft("pkg-a", "mine", "a", "delete")},
		want:     "pkg-a/mine edit by a",
	}, {
		name: "deletion proposals are not touched",
		revs: []Revision{{Package: "pkg-a", Name: "pkg-a/v1", Lifecycle: porch.DeletionProposed, Owner: "gone"}},
		want: "",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := describe(Decide(tc.variants, tc.revs)); got != tc.want {
				t.Errorf("Decide = %q\nwant     %q", got, tc.want)
			}
		})
	}
}

func TestOwns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		owner, adoption string
		want            bool
	}{
		{"a", "", true},
		{"b", "", false},
		{"", "adoptNone", false},
		{"", "adoptExisting", true},
		{"b", "adoptExisting", true},
	} {
		if _, got := Owns(pvFor("a", "p", tc.adoption, ""), tc.owner); got != tc.want {
			t.Errorf("Owns(a, owner %q, %q) = %v, want %v", tc.owner, tc.adoption, got, tc.want)
		}
	}
}

func TestNeedsMerge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cur  *kptpkg.Origin
		rev  string
		want bool
	}{
		{nil, "v1", true},
		{&kptpkg.Origin{Store: locator.Git, Ref: "v1"}, "v1", false},
		{&kptpkg.Origin{Store: locator.Git, Ref: "v1"}, "v2", true},
		{&kptpkg.Origin{Store: locator.OCI, Ref: "v1"}, "v1", true},
		{&kptpkg.Origin{Store: locator.HTTP, Ref: "1.0"}, "1.0", true},
	} {
		if got := NeedsMerge(tc.cur, tc.rev); got != tc.want {
			t.Errorf("NeedsMerge(%+v, %q) = %v, want %v", tc.cur, tc.rev, got, tc.want)
		}
	}
}

func TestWorkspaceRevision(t *testing.T) {
	t.Parallel()
	msgs := map[string]string{
		"c1": "Approve basens/v1\n\nkpt:{\"package\":\"basens\",\"workspaceName\":\"first\",\"revision\":\"v1\"}\n",
		"c2": "Approve basens/v2\n\nkpt:{\"package\":\"basens\",\"workspaceName\":\"second\",\"revision\":\"v2\"}\n",
		"c3": "Approve basens/v3\n\nkpt:{\"package\":\"basens\",\"workspaceName\":\"first\",\"revision\":\"v3\"}\n",
		"c4": "a commit without a trailer\n",
	}
	tags := []Tagged{{"refs/tags/basens/v1", "c1"}, {"basens/v2", "c2"}, {"refs/tags/basens/v3", "c3"}, {"basens/v4", "c4"}, {"other/v9", "c3"}}
	read := func(c string) (string, error) { return msgs[c], nil }
	for _, tc := range []struct{ ws, want, err string }{
		{"first", "v3", ""},
		{"second", "v2", ""},
		{"third", "", `upstream.workspaceName "third": no published revision of basens`},
	} {
		got, err := WorkspaceRevision("basens", tc.ws, tags, read)
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("WorkspaceRevision(%s) = %q, %v; want %q, %q", tc.ws, got, err, tc.want, tc.err)
		}
	}
}

func TestStage(t *testing.T) {
	t.Parallel()
	conflict := []pkgmerge.Conflict{{Field: "spec.x"}}
	for _, tc := range []struct {
		policy    string
		conflicts []pkgmerge.Conflict
		blocking  []string
		want      porch.Lifecycle
	}{
		{"draft", nil, nil, porch.Draft},
		{"propose", nil, nil, porch.Proposed},
		{"publish", nil, nil, porch.Published},
		{"propose", conflict, nil, porch.Draft},
		{"publish", conflict, nil, porch.Draft},
		{"publish", nil, []string{"required injection"}, porch.Draft},
	} {
		if got := Stage(tc.policy, &Plan{Conflicts: tc.conflicts, Blocking: tc.blocking}); got != tc.want {
			t.Errorf("Stage(%s, %d conflicts, %d blocking) = %s, want %s", tc.policy, len(tc.conflicts), len(tc.blocking), got, tc.want)
		}
	}
}
