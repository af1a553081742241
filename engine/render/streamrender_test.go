package render

import (
	"context"
	"fmt"
	"math/rand"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/golden"
)

// streamCases are packages written to exercise the streamed render: a
// config file edited by the functions before the one that reads it,
// subpackages with their own configs, selectors and exclusions, a
// validator, and files whose resources only some functions change.
var streamCases = map[string]kptpkg.Tree{
	"config-edited-before-use": {
		"Kptfile": []byte(`apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
pipeline:
  mutators:
    - image: search-replace:v0.2
      configMap:
        by-value: web-team
        put-value: ops-team
    - image: set-namespace:v0.4
      configMap:
        namespace: prod
    - image: set-labels:v0.2
      configPath: labels.yaml
    - image: apply-setters:v0.2
      configPath: setters.yaml
  validators:
    - image: search-replace:v0.2
      configPath: find.yaml
`),
		"labels.yaml": []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: labels
  namespace: dev
data:
  team: web-team
`),
		"setters.yaml": []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: setters
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  replicas: "3"
  image: nginx:1.27 # a comment
`),
		"find.yaml": []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: find
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  by-path: spec.replicas
`),
		"deploy.yaml": []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # the web tier
  namespace: dev
spec:
  replicas: 1 # kpt-set: ${replicas}
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: nginx:1.25 # kpt-set: ${image}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
`),
		"README.md": []byte("# app\n"),
	},
	"subpackages-and-selectors": {
		"Kptfile": []byte(`apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: root
pipeline:
  mutators:
    - image: set-annotations:v0.1
      configMap:
        owner: platform
      selectors:
        - kind: Deployment
        - name: db
    - image: set-image:v0.1
      configMap:
        name: redis
        newTag: "7.2"
      exclude:
        - namespace: legacy
`),
		"app/Kptfile": []byte(`apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
pipeline:
  mutators:
    - image: set-labels:v0.2
      configPath: labels.yaml
    - image: set-namespace:v0.4
      configPath: ns.yaml
`),
		"app/labels.yaml": []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: labels
data:
  tier: app
`),
		"app/ns.yaml": []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: ns
data:
  namespace: app
`),
		"app/db/Kptfile": []byte(`apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: db
`),
		"app/db/db.yaml": []byte(`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: legacy
spec:
  template:
    spec:
      containers:
        - name: cache
          image: redis:6
`),
		"app/web.yaml": []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: cache
          image: redis:6
`),
		"untouched.yaml": []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: untouched # nothing selects this
data:
  quirky:   spacing
`),
	},
}

// replacementsKptfile is a root Kptfile whose pipeline runs
// apply-replacements between two per-resource functions.
const replacementsKptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: root
pipeline:
  mutators:
    - image: set-namespace:v0.4
      configMap:
        namespace: prod
    - image: apply-replacements:v0.1
      configPath: replacements.yaml
    - image: set-labels:v0.2
      configMap:
        team: web
`

func init() {
	streamCases["apply-replacements"] = kptpkg.Tree{
		"Kptfile": []byte(replacementsKptfile),
		// the second replacement's source is the first one's target
		"replacements.yaml": []byte(`apiVersion: fn.kpt.dev/v1alpha1
kind: ApplyReplacements
metadata:
  name: replacements
  annotations:
    config.kubernetes.io/local-config: "true"
replacements:
  - source:
      kind: ConfigMap
      name: settings
      fieldPath: data.image
    targets:
      - select:
          kind: Deployment
        fieldPaths:
          - spec.template.spec.containers.[name=web].image
  - source:
      kind: Deployment
      name: web
      fieldPath: spec.template.spec.containers.[name=web].image
    targets:
      - select:
          kind: ConfigMap
          name: echo
        fieldPaths:
          - data.image
        options:
          create: true
`),
		"settings.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings # the source\ndata:\n  image: nginx:1.29\n"),
		"echo.yaml":     []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: echo\ndata:\n  other: kept # a comment\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: untouched\n"),
		"app/Kptfile":   []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"),
		"app/deploy.yaml": []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.25 # pinned by settings
        - name: sidecar
          image: envoy:1
`),
	}
	fallBackCases["replacement-renames-into-its-source"] = kptpkg.Tree{
		"Kptfile": []byte(replacementsKptfile),
		"replacements.yaml": []byte(`apiVersion: fn.kpt.dev/v1alpha1
kind: ApplyReplacements
metadata:
  name: replacements
  annotations:
    config.kubernetes.io/local-config: "true"
replacements:
  - source:
      kind: ConfigMap
      name: a
      fieldPath: data.next
    targets:
      - select:
          kind: ConfigMap
          name: c
        fieldPaths:
          - metadata.name
  - source:
      kind: ConfigMap
      name: settings
      fieldPath: data.image
    targets:
      - select:
          kind: ConfigMap
          name: b
        fieldPaths:
          - data.image
`),
		// c becomes the second replacement's source only once the first renames it
		"a.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  next: settings\n"),
		"c.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  image: nginx:1.29\n"),
		"b.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  image: old\n"),
	}
}

// reviewCases were found by review: a function that panics (the catalog's
// *OrDie helpers) must fail the render, not the process; a selection
// numbers the whole list's resources in an annotation search-replace
// reads and may rewrite; .krmignore hides files from the render.
func init() {
	fallBackCases["function-panics"] = kptpkg.Tree{
		"Kptfile":  []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n    - image: set-namespace:v0.4\n      configMap:\n        namespace: prod\n"),
		"crd.yaml": []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: foos.example.com\nspec:\n  conversion:\n    webhook:\n      clientConfig:\n        service:\n          namespace: [a, b]\n"),
	}
	fallBackCases["search-replace-sees-the-selection"] = kptpkg.Tree{
		"Kptfile":     []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n    - image: search-replace:v0.2\n      configMap:\n        by-value: \"1\"\n        put-value: \"3\"\n      selectors:\n        - kind: Deployment\n"),
		"deploy.yaml": []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n"),
		"other.yaml":  []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n"),
	}
	streamCases["krmignore"] = kptpkg.Tree{
		"Kptfile":      []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n    - image: set-labels:v0.2\n      configMap:\n        team: ops\n"),
		".krmignore":   []byte("ignored.yaml\n"),
		"a.yaml":       []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"),
		"ignored.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ignored\n"),
	}
}

// fallBackCases must not stream: the whole-list render decides.
var fallBackCases = map[string]kptpkg.Tree{
	"moves-a-resource": {
		"Kptfile": []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n    - image: set-annotations:v0.1\n      configMap:\n        internal.config.kubernetes.io/path: all.yaml\n"),
		"a.yaml":  []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"),
		"b.yaml":  []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"),
	},
	"depends-on": {
		"Kptfile": []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n    - image: set-namespace:v0.4\n      configMap:\n        namespace: prod\n"),
		"a.yaml":  []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: a\n  namespace: dev\n"),
		"b.yaml":  []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: dev\n  annotations:\n    config.kubernetes.io/depends-on: /namespaces/dev/ServiceAccount/a\n"),
	},
	// set-namespace hands search-replace the list in the SDK's order
	// (alpha before zeta), so its per-resource results follow that order,
	// not the files'.
	"sorted-then-findings": {
		"Kptfile": []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n    - image: set-namespace:v0.4\n      configMap:\n        namespace: prod\n    - image: search-replace:v0.2\n      configMap:\n        by-path: data.tier\n        put-value: x\n"),
		"a.yaml":  []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: zeta\ndata:\n  tier: web\n"),
		"b.yaml":  []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: alpha\ndata:\n  tier: db\n"),
	},
	"bad-config": {
		"Kptfile": []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n    - image: set-image:v0.1\n      configMap:\n        colour: blue\n"),
		"a.yaml":  []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"),
	},
}

// TestStreamRenderMatchesHydrator: the streamed render writes the same
// bytes and reports the same results as the whole-list render, on every
// render golden case it takes, the generated benchmark package and the
// cases above; and it declines what it cannot do exactly.
func TestStreamRenderMatchesHydrator(t *testing.T) {
	t.Parallel()
	mustStream := map[string]bool{"subpackages": true, "generated-300": true, "namespace-blueprint": true}
	// afterSort: a function built on the KRM function SDK (set-namespace)
	// hands the next ones the list sorted, and a later step reports
	// per-resource results (apply-setters, search-replace) in that
	// order, not the files'. set-annotations sorts its results and
	// streams after a sort (generated-300, namespace-blueprint,
	// subpackages-and-selectors).
	afterSort := map[string]bool{"config-edited-before-use": true}
	cases := renderCases(t)
	for name, in := range streamCases {
		cases[name] = in
		mustStream[name] = !afterSort[name]
	}
	for name, in := range fallBackCases {
		cases[name] = in
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			out, results, ok, err := streamRender(ctx, in, RenderOptions{})
			if err != nil {
				t.Fatalf("streamRender: %v", err)
			}
			if _, fallBack := fallBackCases[name]; (fallBack || afterSort[name]) && ok {
				t.Fatal("streamed; the whole-list render must decide this package")
			}
			if mustStream[name] && !ok {
				t.Fatal("did not stream")
			}
			if !ok {
				return
			}
			whole, werr := RenderTree(ctx, in, RenderOptions{WholeList: true})
			if werr != nil {
				t.Fatalf("streamed a package the whole-list render fails: %v", werr)
			}
			golden.SameTrees(t, "render", whole.Tree, out)
			if diff := cmp.Diff(whole.Results, results); diff != "" {
				t.Errorf("results differ (-whole +streamed):\n%s", diff)
			}
			if whole.Tree.Equal(in) {
				t.Error("the case changes nothing; it proves little")
			}
		})
	}
}

// TestStreamRenderRandom compares the streamed and the whole-list render
// on random packages: subpackages, files of several resources, pipelines
// of random per-resource built-ins configured inline or from a (possibly
// edited) resource of the package, selectors, exclusions and validators.
// Whatever the whole-list render does, the streamed one must do the same
// or decline.
func TestStreamRenderRandom(t *testing.T) {
	t.Parallel()
	streamed, replaced := 0, 0
	for seed := int64(1); seed <= 300; seed++ {
		in := randomPackage(rand.New(rand.NewSource(seed)))
		ctx := context.Background()
		out, results, ok, err := streamRender(ctx, in, RenderOptions{})
		if err != nil {
			t.Fatalf("seed %d: streamRender: %v", seed, err)
		}
		if !ok {
			continue
		}
		streamed++
		for p, b := range in {
			if strings.HasSuffix(p, kptpkg.KptfileName) && strings.Contains(string(b), "apply-replacements") {
				replaced++
				break
			}
		}
		whole, werr := RenderTree(ctx, in, RenderOptions{WholeList: true})
		if werr != nil {
			t.Fatalf("seed %d: streamed a package the whole-list render fails: %v", seed, werr)
		}
		golden.SameTrees(t, fmt.Sprintf("seed %d", seed), whole.Tree, out)
		if t.Failed() {
			return
		}
		if diff := cmp.Diff(whole.Results, results); diff != "" {
			t.Fatalf("seed %d: results differ (-whole +streamed):\n%s", seed, diff)
		}
	}
	if streamed < 70 || replaced < 5 {
		t.Errorf("only %d of 300 random packages streamed, %d of them with apply-replacements", streamed, replaced)
	}
}

// TestRenderRandomMatchesKpt holds kptbot's render, streamed and
// whole-list, to kpt's own renderer on random packages: same bytes, same
// number of function runs, same failure. (It found that a selection run
// through a catalog function lost the selected resources.)
func TestRenderRandomMatchesKpt(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 60; seed++ {
		in := randomPackage(rand.New(rand.NewSource(seed)))
		ctx := context.Background()
		kpt, kerr := RenderTree(ctx, in, RenderOptions{KptOnly: true})
		for _, opts := range []RenderOptions{{}, {WholeList: true}} {
			fast, ferr := RenderTree(ctx, in, opts)
			if (ferr == nil) != (kerr == nil) {
				t.Fatalf("seed %d, %+v: kptbot error %v, kpt error %v", seed, opts, ferr, kerr)
			}
			if ferr != nil {
				continue
			}
			golden.SameTrees(t, fmt.Sprintf("seed %d, %+v, kptbot vs kpt", seed, opts), kpt.Tree, fast.Tree)
			if t.Failed() {
				return
			}
			if len(fast.Results.Items) != len(kpt.Results.Items) {
				t.Fatalf("seed %d, %+v: kptbot ran %d functions, kpt %d", seed, opts, len(fast.Results.Items), len(kpt.Results.Items))
			}
		}
	}
}

// randomPackage builds a package tree for the random render tests.
func randomPackage(r *rand.Rand) kptpkg.Tree {
	pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
	t := kptpkg.Tree{}
	dirs := []string{"."}
	for _, d := range []string{"sub", "sub/deeper", "other"} {
		if r.Intn(2) == 0 && (d != "sub/deeper" || slices.Contains(dirs, "sub")) {
			dirs = append(dirs, d)
		}
	}
	resource := func(i int) string {
		ns := pick("", "  namespace: dev\n", "  namespace: legacy\n")
		switch r.Intn(5) {
		case 0:
			return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-%d # app\n%s  labels:\n    tier: silver # kpt-set: ${tier}\nspec:\n  replicas: 1 # kpt-set: ${replicas}\n  selector:\n    matchLabels:\n      app: a\n  template:\n    metadata:\n      labels:\n        app: a\n    spec:\n      containers:\n        - name: web\n          image: %s\n", i, ns, pick("nginx:1.25", "redis:6", "nginx"))
		case 1:
			return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-%d\n%sspec:\n  selector:\n    app: a\n  ports:\n    - port: 80\n", i, ns)
		case 2:
			return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns-%d\n", i)
		case 3:
			return fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb-%d\n%ssubjects:\n  - kind: ServiceAccount\n    name: sa\n    namespace: dev\nroleRef:\n  kind: Role\n  name: r\n  apiGroup: rbac.authorization.k8s.io\n", i, ns)
		default:
			return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n%sdata:\n  team: %s\n  image: nginx:1.25\n", i, ns, pick("web-team", "ops", "data"))
		}
	}
	function := func(dir string, n int) string {
		cfgFile := fmt.Sprintf("fn-config-%d.yaml", n)
		var image, data string
		if r.Intn(5) == 0 {
			// functions that relate resources
			if r.Intn(2) == 0 {
				t[path.Join(dir, cfgFile)] = []byte("apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: sl\nsource: |\n  for r in ctx.resource_list[\"items\"]:\n    r[\"metadata\"][\"labels\"] = {\"seen\": \"yes\"}\n")
				return "    - image: starlark:v0.5\n      configPath: " + cfgFile + "\n"
			}
			source := "ar-source-" + strings.ReplaceAll(dir, "/", "-")
			if r.Intn(4) == 0 {
				source = "ar-source-x" // may be missing, or in several packages
			}
			t[path.Join(dir, source+".yaml")] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + source + "\ndata:\n  image: nginx:" + pick("1.30", "1.31") + "\n")
			t[path.Join(dir, cfgFile)] = []byte("apiVersion: fn.kpt.dev/v1alpha1\nkind: ApplyReplacements\nmetadata:\n  name: ar\nreplacements:\n  - source:\n      kind: ConfigMap\n      name: " + source + "\n      fieldPath: data.image\n    targets:\n      - select:\n          kind: Deployment\n        fieldPaths:\n          - spec.template.spec.containers.[name=web].image\n  - source:\n      kind: ConfigMap\n      name: " + source + "\n      fieldPath: metadata." + pick("name", "namespace") + "\n    targets:\n      - select:\n          kind: ConfigMap\n        fieldPaths:\n          - metadata.annotations.service\n        options:\n          create: true\n")
			return "    - image: apply-replacements:v0.1\n      configPath: " + cfgFile + "\n"
		}
		switch r.Intn(6) {
		case 0:
			image, data = "set-labels:v0.2", fmt.Sprintf("  team: %s\n", pick("web", "ops"))
		case 1:
			image, data = "set-annotations:v0.1", "  owner: platform\n"
		case 2:
			image, data = "set-image:v0.1", fmt.Sprintf("  name: nginx\n  newTag: %q\n", pick("1.27", "1.28"))
		case 3:
			image, data = "set-namespace:v0.4", fmt.Sprintf("  namespace: %s\n", pick("prod", "dev"))
		case 4:
			image, data = "search-replace:v0.2", pick("  by-value: web-team\n  put-value: ops-team\n", "  by-path: spec.replicas\n  put-value: \"3\"\n", "  by-path: metadata.name\n")
		default:
			image, data = "apply-setters:v0.2", fmt.Sprintf("  tier: %s\n  replicas: \"%d\"\n", pick("gold", "bronze"), r.Intn(5))
		}
		spec := "    - image: " + image + "\n"
		if r.Intn(2) == 0 {
			spec += "      configMap:\n" + strings.ReplaceAll(data, "  ", "        ")
		} else {
			local := pick("", "  annotations:\n    config.kubernetes.io/local-config: \"true\"\n")
			t[path.Join(dir, cfgFile)] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + strings.TrimSuffix(cfgFile, ".yaml") + "\n" + local + "data:\n" + data)
			spec += "      configPath: " + cfgFile + "\n"
		}
		switch r.Intn(5) {
		case 0:
			spec += "      selectors:\n        - kind: " + pick("Deployment", "ConfigMap", "Service") + "\n"
		case 1:
			spec += "      exclude:\n        - namespace: legacy\n"
		}
		return spec
	}
	for _, dir := range dirs {
		kf := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + path.Base(dir) + "\n"
		if r.Intn(4) != 0 {
			kf += "pipeline:\n  mutators:\n"
			for i := 0; i < 1+r.Intn(4); i++ {
				kf += function(dir, i)
			}
			if r.Intn(3) == 0 {
				kf += "  validators:\n" + function(dir, 9)
			}
		}
		t[path.Join(dir, kptpkg.KptfileName)] = []byte(kf)
		for f := 0; f < 1+r.Intn(4); f++ {
			var docs []string
			for i := 0; i < 1+r.Intn(4); i++ {
				docs = append(docs, resource(f*10+i))
			}
			t[path.Join(dir, fmt.Sprintf("file-%d.yaml", f))] = []byte(strings.Join(docs, "---\n"))
		}
	}
	return t
}
