package config

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDesignExample(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/design-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("kptbot.yaml", b)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if f.Repository == nil || f.Repository.Spec.Approvals.Users[0] != "alice" || !f.Repository.Spec.Deployment {
		t.Errorf("repository = %+v", f.Repository)
	}
	if len(f.Variants) != 1 || f.Variants[0].Spec.Injectors[0].Name != "edge-1-endpoints" ||
		f.Variants[0].Spec.Pipeline.Mutators[0].ConfigMap["cost-center"] != "42" {
		t.Errorf("variants = %+v", f.Variants)
	}
	if len(f.Sets) != 1 || f.Sets[0].Spec.Targets[1].Template.Downstream.PackageExpr != "repository.name + '-ns'" {
		t.Errorf("sets = %+v", f.Sets)
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	f, err := Parse("kptbot.yaml", []byte(`apiVersion: kptbot.dev/v1alpha1
kind: PackageVariant
metadata: {name: v}
spec:
  upstream: {repo: org/bp, package: basens}
  downstream: {package: ns}
`))
	if err != nil {
		t.Fatal(err)
	}
	d := Defaults(f)
	got := []string{d.Repository.Spec.Directory, d.Repository.Spec.UpdatePolicy, d.Repository.Spec.MergeMethod,
		d.Variants[0].Spec.Upstream.Revision, d.Variants[0].Spec.AdoptionPolicy, d.Variants[0].Spec.DeletionPolicy, d.Variants[0].Spec.UpdatePolicy}
	want := []string{"/", "propose", "merge", "latest", "adoptNone", "delete", "propose"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if d.Repository.Spec.MaxOpenUpdates != 20 || d.Repository.Spec.Approvals.Minimum != 1 {
		t.Errorf("numeric defaults: %+v", d.Repository.Spec)
	}
	if f.Variants[0].Spec.Upstream.Revision != "" {
		t.Error("Defaults modified its input")
	}
}

func TestParseProblems(t *testing.T) {
	t.Parallel()
	const pv = "apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: v}\n"
	tests := []struct {
		name string
		in   string
		want []string // each a Problem.String() substring, in order
	}{
		{"unknown field with suggestion", pv + "spec:\n  upstream: {repo: r, package: p, revison: v3}\n  downstream: {package: d}\n",
			[]string{`kptbot.yaml:5: document 0: spec.upstream.revison: unknown field; expected one of: package, repo, revision, versions, workspaceName (did you mean "revision"?)`}},
		{"wrong apiVersion", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\n",
			[]string{`kptbot.yaml:1: document 0: apiVersion: "config.porch.kpt.dev/v1alpha1": expected kptbot.dev/v1alpha1`}},
		{"unknown kind", "apiVersion: kptbot.dev/v1alpha1\nkind: Package\n",
			[]string{`document 0: kind: "Package": expected one of Repository, PackageVariant, PackageVariantSet`}},
		{"all problems at once", pv + "spec:\n  upstream: {repo: r}\n  adoptionPolicy: adoptAll\n  deletionPolicy: keep\n  packageContext: {data: {name: x}, removeKeys: [package-path]}\n  pipeline:\n    mutators:\n      - name: a.b\n        image: set-labels:v0.2\n",
			[]string{
				`spec.upstream.package: is required`,
				`spec.downstream.package: is required`,
				`spec.adoptionPolicy: "adoptAll": expected one of adoptExisting, adoptNone`,
				`spec.deletionPolicy: "keep": expected one of delete, orphan`,
				`spec.packageContext.data.name: "x": "name" is reserved`,
				`spec.packageContext.removeKeys[0]: "package-path": "package-path" is reserved`,
				`spec.pipeline.mutators[0].name: "a.b": must not contain dots`,
			}},
		{"wrong types", pv + "spec:\n  upstream: [r]\n  paused: yes-please\n  downstream: {package: d}\n",
			[]string{`spec.upstream: expected a mapping`, `spec.paused: "yes-please": expected true or false`}},
		{"set targets", "apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariantSet\nmetadata: {name: s}\nspec:\n  upstream: {repo: r, package: p}\n  targets:\n    - repositories: [{name: o/a}]\n      repositorySelector: {matchLabels: {a: b}}\n    - template:\n        injectors: [{kind: ConfigMap}]\n        labelExprs: [{key: k}]\n",
			[]string{
				`spec.targets[0]: exactly one of repositories and repositorySelector must be set`,
				`spec.targets[1]: exactly one of repositories and repositorySelector must be set`,
				`spec.targets[1].template.injectors[0]: exactly one of name and nameExpr must be set`,
				`spec.targets[1].template.labelExprs[0]: exactly one of value and valueExpr must be set`,
			}},
		{"duplicate names and repositories", pv + "spec: {upstream: {repo: r, package: p}, downstream: {package: d}}\n---\n" + pv + "spec: {upstream: {repo: r, package: p}, downstream: {package: e}}\n---\napiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata: {name: a}\n---\napiVersion: kptbot.dev/v1alpha1\nkind: Repository\nmetadata: {name: b}\n",
			[]string{`document 3: kind: "Repository": at most one Repository per file (the first is document 2)`}},
		{"not yaml", "a: [b\n", []string{`document 0: not valid YAML`}},
		{"workspaceName and revision", pv + "spec:\n  upstream: {repo: r, package: p, revision: v3, workspaceName: blue}\n  downstream: {package: d}\n",
			[]string{`kptbot.yaml:5: document 0: spec.upstream.workspaceName: "blue": and spec.upstream.revision "v3" are mutually exclusive`}},
		{"workspaceName on OCI", pv + "spec:\n  upstream: {repo: oci://r.example/p, package: p, workspaceName: blue}\n  downstream: {package: d}\n",
			[]string{`spec.upstream.workspaceName: "blue": is only for git upstreams`}},
		{"empty packageNames entries", "apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariantSet\nmetadata: {name: s}\nspec:\n  upstream: {repo: r, package: p}\n  targets:\n    - repositories: [{name: o/a, packageNames: [ok, \"\", \" \"]}]\n",
			[]string{
				`kptbot.yaml:7: document 0: spec.targets[0].repositories[0].packageNames[1]: cannot be empty: each entry names a downstream package`,
				`spec.targets[0].repositories[0].packageNames[2]: " ": cannot be empty`,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("kptbot.yaml", []byte(tc.in))
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Parse error = %v, want *Error", err)
			}
			msg := err.Error()
			pos := 0
			for _, w := range tc.want {
				i := strings.Index(msg[pos:], w)
				if i < 0 {
					t.Fatalf("error lacks (in order) %q:\n%s", w, msg)
				}
				pos += i + len(w)
			}
		})
	}
}

func TestParseDuplicateVariantNames(t *testing.T) {
	t.Parallel()
	doc := "apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: v}\nspec: {upstream: {repo: r, package: p}, downstream: {package: d}}\n"
	_, err := Parse("kptbot.yaml", []byte(doc+"---\n"+doc))
	if err == nil || !strings.Contains(err.Error(), `document 1: metadata.name: "v": a PackageVariant of that name is already defined in document 0`) {
		t.Errorf("error = %v", err)
	}
}

func FuzzParse(f *testing.F) {
	b, _ := os.ReadFile("testdata/design-example.yaml")
	f.Add(b)
	f.Add([]byte("apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.yaml", data)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || len(perr.Problems) == 0 {
				t.Fatalf("error %v is not a *Error with problems", err)
			}
			return
		}
		_ = Defaults(file)
	})
}

// Porch's upstream.workspaceName is a field kptbot.yaml accepts.
func TestParseUpstreamWorkspaceName(t *testing.T) {
	t.Parallel()
	f, err := Parse("kptbot.yaml", []byte("apiVersion: kptbot.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: v}\nspec:\n  upstream: {repo: org/blueprints, package: basens, workspaceName: blue}\n  downstream: {package: d}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Variants[0].Spec.Upstream.WorkspaceName; got != "blue" {
		t.Errorf("workspaceName = %q", got)
	}
}
