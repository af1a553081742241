package enginetest

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// GenPackage builds a package of n resources (Deployments, Services and
// ConfigMaps, 10 per file) with a 5-function built-in pipeline.
func GenPackage(n int, replicas int) kptpkg.Tree {
	t := kptpkg.Tree{kptpkg.KptfileName: []byte(`apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: bench
pipeline:
  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/apply-setters:v0.2.0
      configMap:
        tier: gold
    - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1
      configMap:
        namespace: bench
    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0
      configMap:
        team: platform
    - image: ghcr.io/kptdev/krm-functions-catalog/set-annotations:v0.1.4
      configMap:
        owner: platform@example.com
    - image: ghcr.io/kptdev/krm-functions-catalog/set-image:v0.1.1
      configMap:
        name: nginx
        newTag: "1.27"
`)}
	var b strings.Builder
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%d
  labels:
    app: app-%d
    tier: silver # kpt-set: ${tier}
spec:
  replicas: %d
  selector:
    matchLabels:
      app: app-%d
  template:
    metadata:
      labels:
        app: app-%d
    spec:
      containers:
        - name: web
          image: nginx:1.25
          ports:
            - containerPort: 80
`, i, i, replicas, i, i)
		case 1:
			fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata:
  name: svc-%d
  creationTimestamp: null
spec:
  selector:
    app: app-%d
  ports:
    - port: 80
      targetPort: 80
`, i, i-1)
		default:
			fmt.Fprintf(&b, `apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-%d
data:
  key: value-%d
  replicas: "%d"
`, i, i, replicas)
		}
		if i%10 == 9 || i == n-1 {
			t[fmt.Sprintf("resources-%04d.yaml", i/10)] = []byte(b.String())
			b.Reset()
		} else {
			b.WriteString("---\n")
		}
	}
	return t
}

// GenReplacementsPackage is genPackage with a pipeline around
// apply-replacements (one source ConfigMap pinning every Deployment's
// image), the catalog function Nephio packages lean on.
func GenReplacementsPackage(n int) kptpkg.Tree {
	t := GenPackage(n, 1)
	t[kptpkg.KptfileName] = []byte(`apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: bench
pipeline:
  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1
      configMap:
        namespace: bench
    - image: ghcr.io/kptdev/krm-functions-catalog/apply-replacements:v0.1.1
      configPath: replacements.yaml
    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0
      configMap:
        team: platform
`)
	t["replacements.yaml"] = []byte(`apiVersion: fn.kpt.dev/v1alpha1
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
`)
	t["settings.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  image: nginx:1.29\n")
	return t
}

// Mutate returns a copy of t with seeded random edits: changed values,
// removed documents, new files and new resources.
func Mutate(t kptpkg.Tree, r *rand.Rand, tag string) kptpkg.Tree {
	out := kptpkg.Tree{}
	moved := ""
	for _, p := range t.Paths() {
		s := string(t[p])
		if p != kptpkg.KptfileName {
			switch r.Intn(9) {
			case 0:
				s = strings.Replace(s, "replicas: 1", "replicas: "+fmt.Sprint(2+r.Intn(5)), 1)
			case 1:
				s = strings.Replace(s, "image: nginx:1.25", "image: nginx:"+tag, 1)
			case 2:
				if docs := strings.Split(s, "---\n"); len(docs) > 1 {
					i := r.Intn(len(docs))
					s = strings.Join(append(docs[:i:i], docs[i+1:]...), "---\n")
				}
			case 3:
				s = strings.Replace(s, "key: value", "key: "+tag, 1)
			case 4:
				s += "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra-" + tag + "\ndata:\n  a: b\n"
			case 5:
				s = strings.Replace(s, "ports:", "ports: # "+tag, 1)
			case 6:
				// a resource moves to another file (a new resource there, for kpt)
				if docs := strings.Split(s, "---\n"); len(docs) > 1 {
					moved += "---\n" + docs[0]
					s = strings.Join(docs[1:], "---\n")
				}
			case 7:
				if r.Intn(3) == 0 {
					continue // the whole file deleted
				}
			}
		}
		out[p] = []byte(s)
	}
	if moved != "" {
		out["moved-"+tag+".yaml"] = []byte(strings.TrimPrefix(moved, "---\n"))
	}
	if r.Intn(2) == 0 {
		out["new-"+tag+".yaml"] = []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s-" + tag + "\n")
	}
	if r.Intn(3) == 0 {
		out["notes-"+tag+".txt"] = []byte("hello " + tag + "\n")
	}
	return out
}
