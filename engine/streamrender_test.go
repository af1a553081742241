package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// streamCases are packages written to exercise the streamed render: a
// config file edited by the functions before the one that reads it,
// subpackages with their own configs, selectors and exclusions, a
// validator, and files whose resources only some functions change.
var streamCases = map[string]Tree{
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

// fallBackCases must not stream: the whole-list render decides.
var fallBackCases = map[string]Tree{
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
	mustStream := map[string]bool{"generated-300": true, "namespace-blueprint": true, "subpackages": true}
	cases := map[string]Tree{"generated-300": genPackage(300, 1)}
	for name, in := range streamCases {
		cases[name] = in
		mustStream[name] = true
	}
	for name, in := range fallBackCases {
		cases[name] = in
	}
	for _, name := range caseDirs(t, "render") {
		in, err := ReadTree(filepath.Join("testdata", "render", name, "in"))
		if err != nil {
			t.Fatal(err)
		}
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
			if _, fallBack := fallBackCases[name]; fallBack && ok {
				t.Fatal("streamed; the whole-list render must decide this package")
			}
			if mustStream[name] && !ok {
				t.Fatal("did not stream")
			}
			if !ok {
				return
			}
			whole, werr := RenderTree(ctx, in, RenderOptions{wholeList: true})
			if werr != nil {
				t.Fatalf("streamed a package the whole-list render fails: %v", werr)
			}
			for _, p := range unionPaths(whole.Tree, out) {
				if string(whole.Tree[p]) != string(out[p]) {
					t.Errorf("%s differs (-whole +streamed):\n%s", p, cmp.Diff(string(whole.Tree[p]), string(out[p])))
				}
			}
			if diff := cmp.Diff(whole.Results, results); diff != "" {
				t.Errorf("results differ (-whole +streamed):\n%s", diff)
			}
			if whole.Tree.Equal(in) {
				t.Error("the case changes nothing; it proves little")
			}
		})
	}
}
