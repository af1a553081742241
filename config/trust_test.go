package config

import (
	"context"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/go-cmp/cmp"
)

func TestCheckPackagePath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path string
		want string // "" when valid, else a part of the message
	}{
		{"team-ns", ""},
		{"sites/edge-1/ns", ""},
		{"ns/", ""},
		{"a.b", ""},
		{"x..y", ""},
		{"", "is empty"},
		{"/ns", "relative"},
		{"../prod", `".." segment`},
		{"ns/../../x", `".." segment`},
		{"./ns", `"." segment`},
		{"a//b", "empty segment"},
		{".github", "dot-directory (.github)"},
		{".github/workflows", "dot-directory (.github)"},
		{"pkgs/.gitlab", "dot-directory (.gitlab)"},
		{".git/hooks", "dot-directory (.git)"},
		{`a\..\b`, "slash-separated"},
		{"a\x00b", "slash-separated"},
		{"a\nb", "slash-separated"},
	} {
		err := CheckPackagePath(tc.path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckPackagePath(%q) = %v, want valid", tc.path, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckPackagePath(%q) = %v, want an error saying %q", tc.path, err, tc.want)
		}
	}
}

// FuzzCheckPackagePath: a path the rule accepts, joined under any package
// directory, stays under it and names no dot-directory.
func FuzzCheckPackagePath(f *testing.F) {
	for _, s := range []string{"ns", "a/b", "../x", ".github/w", "a/./b", "a//b", "/x", "..", "a/..", "\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if CheckPackagePath(p) != nil {
			return
		}
		joined := path.Join("pkgs", p)
		if !strings.HasPrefix(joined, "pkgs/") {
			t.Fatalf("%q accepted but joins to %q, outside pkgs/", p, joined)
		}
		for _, seg := range strings.Split(joined, "/") {
			if strings.HasPrefix(seg, ".") {
				t.Fatalf("%q accepted but names %q", p, seg)
			}
		}
	})
}

func TestAllowsDownstream(t *testing.T) {
	t.Parallel()
	s := RepositorySpec{AllowedDownstreams: []string{"acme/site-1", "partner/*", "gitlab:ops/edge/*", "gitlab:solo/proj"}}
	for _, tc := range []struct {
		upForge, downForge, name string
		want                     bool
	}{
		{"github", "github", "acme/site-1", true},
		{"github", "github", "ACME/Site-1", true},
		{"github", "github", "acme/site-2", false},
		{"github", "github", "partner/anything", true},
		{"github", "github", "partnerx/anything", false},
		{"github", "github", "partner", false},
		{"github", "gitlab", "acme/site-1", false}, // an unprefixed entry is the upstream's forge
		{"github", "gitlab", "ops/edge/a/b", true},
		{"github", "gitlab", "ops/edgy/a", false},
		{"github", "github", "ops/edge/a", false},
		{"github", "gitlab", "solo/proj", true},
		{"gitlab", "gitlab", "partner/x/y", true},
	} {
		if got := s.AllowsDownstream(tc.upForge, tc.downForge, tc.name); got != tc.want {
			t.Errorf("AllowsDownstream(%s, %s, %s) = %v, want %v", tc.upForge, tc.downForge, tc.name, got, tc.want)
		}
	}
	if (RepositorySpec{}).AllowsDownstream("github", "github", "acme/x") {
		t.Error("an empty allowedDownstreams allows a downstream")
	}
}

func TestParseTrust(t *testing.T) {
	t.Parallel()
	f, err := Parse("kptbot.yaml", []byte(`apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata: {name: prod}
spec:
  acceptVariantsFrom:
    - org/fleet
    - {repo: org/fleet-2, updatePolicy: publish, adoptionPolicy: adoptExisting}
  allowedDownstreams: [org/site-1, partner/*, "gitlab:group/sub/*"]
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []VariantSource{{Repo: "org/fleet"}, {Repo: "org/fleet-2", UpdatePolicy: "publish", AdoptionPolicy: "adoptExisting"}}
	if diff := cmp.Diff(want, f.Repository.Spec.AcceptVariantsFrom); diff != "" {
		t.Errorf("acceptVariantsFrom (-want +got):\n%s", diff)
	}
	if src, ok := f.Repository.Spec.VariantSource("Org/Fleet-2"); !ok || src.UpdatePolicy != "publish" {
		t.Errorf("VariantSource(Org/Fleet-2) = %+v, %v", src, ok)
	}
	if _, ok := f.Repository.Spec.VariantSource("org/sandbox"); ok {
		t.Error("a repository not listed is accepted")
	}
}

func TestParseTrustErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"accept entries", `apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata: {name: prod}
spec:
  acceptVariantsFrom: [fleet, "org/*", {repo: org/f, updatePolicy: now}, {repo: org/g, adoptionPolicy: steal}, {updatePolicy: publish}]
`, []string{
			`spec.acceptVariantsFrom[0]: "fleet": expected owner/name`,
			`spec.acceptVariantsFrom[1]: "org/*": segment "*": expected owner/name`,
			`spec.acceptVariantsFrom[2].updatePolicy: "now": expected one of draft, propose, publish`,
			`spec.acceptVariantsFrom[3].adoptionPolicy: "steal": expected one of adoptExisting, adoptNone`,
			`spec.acceptVariantsFrom[4]: is empty: expected owner/name`,
		}},
		{"accept entry shape", `apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata: {name: prod}
spec:
  acceptVariantsFrom: [{rep: org/h}, [org/i]]
`, []string{
			`spec.acceptVariantsFrom[0].rep: unknown field; expected one of: adoptionPolicy, repo, updatePolicy (did you mean "repo"?)`,
			`spec.acceptVariantsFrom[1]: expected a mapping`,
		}},
		{"allowed downstreams", `apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata: {name: up}
spec:
  allowedDownstreams: ["*", "org/", "gitlab:x", "a/*/b"]
`, []string{
			`spec.allowedDownstreams[0]: "*": expected owner/name`,
			`spec.allowedDownstreams[1]: "org/": has an empty segment`,
			`spec.allowedDownstreams[2]: "gitlab:x": expected owner/name`,
			`spec.allowedDownstreams[3]: "a/*/b": segment "*": expected owner/name or owner/*`,
		}},
		{"downstream paths", `apiVersion: kptbot.dev/v1alpha1
kind: PackageVariant
metadata: {name: v}
spec:
  upstream: {repo: org/bp, package: basens}
  downstream: {package: .github/workflows}
---
apiVersion: kptbot.dev/v1alpha1
kind: PackageVariantSet
metadata: {name: s}
spec:
  upstream: {repo: org/bp, package: basens}
  targets:
    - repositories: [{name: org/a, packageNames: [ok, ../b]}]
      template:
        downstream: {package: /abs}
`, []string{
			`spec.downstream.package: ".github/workflows": downstream package path must not name a dot-directory (.github)`,
			`spec.targets[0].repositories[0].packageNames[1]: "../b": downstream package path must not contain a ".." segment`,
			`spec.targets[0].template.downstream.package: "/abs": downstream package path must be relative`,
		}},
		{"directory", `apiVersion: kptbot.dev/v1alpha1
kind: Repository
metadata: {name: r}
spec: {directory: pkgs/../../etc}
`, []string{`spec.directory: "pkgs/../../etc": must stay inside the repository`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("kptbot.yaml", []byte(tc.doc))
			if err == nil {
				t.Fatal("parsed without error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

func fleetSet(tmpl *PackageVariantTemplate) PackageVariantSet {
	return PackageVariantSet{
		Metadata: ObjectMeta{Name: "fleet"},
		Spec: PackageVariantSetSpec{
			Upstream: &Upstream{Repo: "org/bp", Package: "app"},
			Targets:  []Target{{Repositories: []RepositoryTarget{{Name: "org/prod"}}, Template: tmpl}},
		},
	}
}

// TestExpandChecksDownstreamPaths: an expression (or the upstream's own
// package name, the default) cannot put a package outside the package
// directory or into a dot-directory.
func TestExpandChecksDownstreamPaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		set  PackageVariantSet
		want string
	}{
		{"packageExpr", fleetSet(&PackageVariantTemplate{Downstream: &DownstreamTemplate{PackageExpr: "'.github/' + 'workflows'"}}), `the downstream package ".github/workflows" for org/prod must not name a dot-directory`},
		{"downstreamExprs", fleetSet(&PackageVariantTemplate{DownstreamExprs: &DownstreamExprs{PackageExpr: "'../' + repoDefault"}}), `must not contain a ".." segment`},
		{"upstream default", func() PackageVariantSet {
			s := fleetSet(nil)
			s.Spec.Upstream.Package = ".gitlab"
			return s
		}(), `the downstream package ".gitlab"`},
	} {
		_, err := Expand(tc.set, ExpandInput{})
		if err == nil || !strings.Contains(err.Error(), "PackageVariantSet fleet: spec.targets[0]: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Expand error = %v, want one naming the set and saying %q", tc.name, err, tc.want)
		}
	}
}

// TestExpandCELLimits: an expression that would run for long is stopped
// by the cost limit, with an error naming the set, target and field; a
// cheap one (Porch's usual) is unaffected.
func TestExpandCELLimits(t *testing.T) {
	t.Parallel()
	digits := "[0,1,2,3,4,5,6,7,8,9]"
	heavy := "string(" + digits + ".map(a, " + digits + ".map(b, " + digits + ".map(c, " + digits + ".map(d, " + digits + ".map(e, a+b+c+d+e))))).size())"
	set := fleetSet(&PackageVariantTemplate{LabelExprs: []MapExpr{{Key: "k", ValueExpr: heavy}}})
	_, err := Expand(set, ExpandInput{})
	want := "PackageVariantSet fleet: spec.targets[0]: template.labelExprs[0].valueExpr: "
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "exceeds the cost limit") {
		t.Fatalf("Expand = %v, want %q ... exceeds the cost limit", err, want)
	}
	long := fleetSet(&PackageVariantTemplate{LabelExprs: []MapExpr{{Key: "k", ValueExpr: "'" + strings.Repeat("a", ExprSizeLimit) + "'"}}})
	if _, err := Expand(long, ExpandInput{}); err == nil || !strings.Contains(err.Error(), "template.labelExprs[0].valueExpr") {
		t.Errorf("an expression over %d code points: %v", ExprSizeLimit, err)
	}
	cheap := fleetSet(&PackageVariantTemplate{LabelExprs: []MapExpr{{Key: "k", ValueExpr: "repoDefault + '-' + packageDefault"}}})
	pvs, err := Expand(cheap, ExpandInput{})
	if err != nil || pvs[0].Spec.Labels["k"] != "org/prod-app" {
		t.Errorf("cheap expression: %+v, %v", pvs, err)
	}
}

// TestEvalDeadline: once a set's expansion is out of time, its remaining
// expressions are not evaluated, and the error says why.
func TestEvalDeadline(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ev := &evaluator{ctx: ctx, set: "fleet", progs: map[string]cel.Program{}}
	_, err := ev.eval("repoDefault", map[string]any{"repoDefault": "x"})
	if err == nil || !strings.Contains(err.Error(), "took longer than "+ExpandTimeout.String()) {
		t.Errorf("eval after the deadline = %v", err)
	}
}

// TestExpandCostBudget: expressions each under the cost limit still stop
// once the set's evaluations together exceed its budget.
func TestExpandCostBudget(t *testing.T) {
	t.Parallel()
	digits := "[0,1,2,3,4,5,6,7,8,9]"
	medium := "string(" + digits + ".map(a, " + digits + ".map(b, " + digits + ".map(c, a+b+c))).size())"
	ev := &evaluator{ctx: context.Background(), progs: map[string]cel.Program{}}
	if _, err := ev.eval(medium, nil); err != nil || ev.spent == 0 || ev.spent > ExprCostLimit {
		t.Fatalf("one evaluation: cost %d, %v; want under the limit %d", ev.spent, err, ExprCostLimit)
	}
	targets := int(ExpandCostBudget/ev.spent) + 2
	set := fleetSet(&PackageVariantTemplate{LabelExprs: []MapExpr{{Key: "k", ValueExpr: medium}}})
	set.Spec.Targets[0].Repositories = nil
	for i := 0; i < targets; i++ {
		set.Spec.Targets[0].Repositories = append(set.Spec.Targets[0].Repositories, RepositoryTarget{Name: fmt.Sprintf("org/r%d", i)})
	}
	_, err := Expand(set, ExpandInput{})
	if err == nil || !strings.Contains(err.Error(), "template.labelExprs[0].valueExpr") || !strings.Contains(err.Error(), "exceed the cost budget") {
		t.Errorf("%d targets at cost %d each: %v", targets, ev.spent, err)
	}
	set.Spec.Targets[0].Repositories = set.Spec.Targets[0].Repositories[:targets/2]
	if _, err := Expand(set, ExpandInput{}); err != nil {
		t.Errorf("%d targets, within the budget: %v", targets/2, err)
	}
}
