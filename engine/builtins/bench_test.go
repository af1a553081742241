package builtins

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/internal/enginetest"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// generateResourceList builds a kpt-style ResourceList of n resources: a
// mix of Deployments (with setter comments), Services, ConfigMaps (with
// comments) and ServiceAccounts, annotated the way kpt annotates items.
func generateResourceList(n int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	ann := func(file string) string {
		return fmt.Sprintf("    annotations:\n      config.kubernetes.io/index: '0'\n      config.kubernetes.io/path: '%[1]s'\n      internal.config.kubernetes.io/index: '0'\n      internal.config.kubernetes.io/path: '%[1]s'\n", file)
	}
	for i := 0; i < n; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, `- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: app-%[1]d
    namespace: example # kpt-set: ${namespace}
    labels:
      app: app-%[1]d
%[2]s  spec:
    replicas: 3 # kpt-set: ${replicas}
    selector:
      matchLabels:
        app: app-%[1]d
    template:
      metadata:
        labels:
          app: app-%[1]d
      spec:
        containers:
        - name: nginx
          image: nginx:1.14.2 # kpt-set: nginx:${tag}
          ports:
          - containerPort: 80
          resources:
            limits:
              cpu: 500m
              memory: 128Mi
`, i, ann(fmt.Sprintf("app-%d/deployment.yaml", i)))
		case 1:
			fmt.Fprintf(&b, `- apiVersion: v1
  kind: Service
  metadata:
    name: app-%[1]d
    namespace: example
%[2]s  spec:
    selector:
      app: app-%[1]d
    ports:
    - name: http
      port: 80
      targetPort: 8080
`, i, ann(fmt.Sprintf("app-%d/service.yaml", i-1)))
		case 2:
			fmt.Fprintf(&b, `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: app-%[1]d-config
    namespace: example
%[2]s  data:
    # Settings read at start-up.
    log-level: info # one of debug, info, warn
    workers: "4"
`, i, ann(fmt.Sprintf("app-%d/configmap.yaml", i-2)))
		default:
			fmt.Fprintf(&b, `- apiVersion: v1
  kind: ServiceAccount
  metadata:
    name: app-%[1]d
    namespace: example
%[2]s`, i, ann(fmt.Sprintf("app-%d/sa.yaml", i-3)))
		}
	}
	b.WriteString("functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: none\n")
	return []byte(b.String())
}

type stage struct {
	image, config string
}

// pipeline is the benchmark's render pipeline: five common mutators.
func pipeline() []stage {
	cm := func(data ...string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn-config\ndata:\n  " + strings.Join(data, "\n  ") + "\n"
	}
	return []stage{
		{"gcr.io/kpt-fn/set-namespace:v0.4.1", cm("namespace: prod")},
		{"ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0", cm("env: prod", "team: web")},
		{"set-annotations:v0.1.4", cm("owner: team-web")},
		{"apply-setters:v0.2.0", cm(`replicas: "5"`, "tag: 1.25.3")},
		{"set-image:v0.1.1", cm("name: nginx", "newName: registry.example.com/nginx")},
	}
}

// withConfig replaces the functionConfig (and drops the results) of a
// ResourceList this package wrote, as the orchestrator does between steps.
func withConfig(rl []byte, config string) []byte {
	if i := bytes.Index(rl, []byte("\nfunctionConfig:\n")); i >= 0 {
		rl = rl[:i+1]
	} else if i := bytes.Index(rl, []byte("\nresults:\n")); i >= 0 {
		rl = rl[:i+1]
	}
	var b bytes.Buffer
	b.Write(rl)
	b.WriteString("functionConfig:\n")
	for _, l := range strings.SplitAfter(config, "\n") {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	return b.Bytes()
}

func runPipeline(tb testing.TB, in []byte) []byte {
	for _, s := range pipeline() {
		f, ok := Lookup(s.image)
		if !ok {
			tb.Fatalf("no built-in for %s", s.image)
		}
		var out bytes.Buffer
		if err := f.Run(bytes.NewReader(withConfig(in, s.config)), &out); err != nil {
			tb.Fatalf("%s: %v", s.image, err)
		}
		in = out.Bytes()
	}
	return in
}

// TestPipeline checks the benchmark pipeline does what it claims, so the
// benchmark measures real work.
func TestPipeline(t *testing.T) {
	t.Parallel()
	out := string(runPipeline(t, generateResourceList(8)))
	for _, want := range []string{
		"    name: app-0\n    namespace: prod # kpt-set: ${namespace}\n    labels:\n      app: app-0\n      env: prod\n      team: web\n",
		"      owner: team-web\n",
		"    replicas: 5 # kpt-set: ${replicas}\n",
		"          image: registry.example.com/nginx:1.25.3 # kpt-set: nginx:${tag}\n",
		"    # Settings read at start-up.\n    log-level: info # one of debug, info, warn\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("pipeline output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "namespace: example") {
		t.Errorf("a namespace was not set:\n%s", out)
	}
}

// TestPipelineThroughKpt drives the pipeline with kyaml's FunctionFilter, the
// way kpt runs a function runner, so kpt's reading of our output, its id
// annotations and its comment restoration are exercised too.
func TestPipelineThroughKpt(t *testing.T) {
	t.Parallel()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(generateResourceList(8))}).Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range pipeline() {
		f, _ := Lookup(s.image)
		fltr := &runtimeutil.FunctionFilter{Run: f.Run, FunctionConfig: yaml.MustParse(s.config), GlobalScope: true}
		if nodes, err = fltr.Filter(nodes); err != nil {
			t.Fatalf("%s: %v", s.image, err)
		}
	}
	var out bytes.Buffer
	if err := (kio.ByteWriter{Writer: &out}).Write(nodes); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  namespace: prod # kpt-set: ${namespace}\n  labels:\n    app: app-0\n    env: prod\n    team: web\n",
		"    owner: team-web\n",
		"  replicas: 5 # kpt-set: ${replicas}\n",
		"        image: registry.example.com/nginx:1.25.3 # kpt-set: nginx:${tag}\n",
		"  # Settings read at start-up.\n  log-level: info # one of debug, info, warn\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "\n---\n"); n != 7 {
		t.Errorf("got %d resources, want 8:\n%s", n+1, out.String())
	}
}

// BenchmarkBuiltinPipeline runs five built-ins in sequence over 1,000
// resources through their wire interface, as `kpt fn render` would.
func BenchmarkBuiltinPipeline(b *testing.B) {
	in := generateResourceList(1000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		runPipeline(b, in)
	}
}

// BenchmarkBuiltinPipelineKpt is the same pipeline driven by kyaml's
// FunctionFilter, which is how kpt calls a function runner, so it includes
// kpt's own serialization of the ResourceList before and after each step.
func BenchmarkBuiltinPipelineKpt(b *testing.B) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(generateResourceList(1000))}).Read()
	if err != nil {
		b.Fatal(err)
	}
	type step struct {
		f   *Function
		cfg *yaml.RNode
	}
	var steps []step
	for _, s := range pipeline() {
		f, _ := Lookup(s.image)
		steps = append(steps, step{f, yaml.MustParse(s.config)})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cur := make([]*yaml.RNode, len(nodes))
		for i, n := range nodes {
			cur[i] = n.Copy()
		}
		b.StartTimer()
		for _, s := range steps {
			fltr := &runtimeutil.FunctionFilter{Run: s.f.Run, FunctionConfig: s.cfg, GlobalScope: true}
			if cur, err = fltr.Filter(cur); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSmallPackage runs the small package's pipeline (set-namespace,
// apply-replacements, starlark) in process, as the renderer calls the
// built-ins: where a small render spends its time once the process runs.
func BenchmarkSmallPackage(b *testing.B) {
	const catalog = "image: ghcr.io/kptdev/krm-functions-catalog/"
	pkg := enginetest.SmallPackage(catalog+"set-namespace:v0.4.5", catalog+"apply-replacements:v0.1.5", catalog+"starlark:v0.5.5")
	configs := map[string]bool{kptpkg.KptfileName: true, "replacements.yaml": true, "tier.yaml": true}
	var items []*yaml.RNode
	for _, path := range slices.Sorted(maps.Keys(pkg)) {
		if configs[path] {
			continue
		}
		it := yaml.MustParse(string(pkg[path]))
		if err := it.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, path)); err != nil {
			b.Fatal(err)
		}
		items = append(items, it)
	}
	steps := []struct{ image, config string }{
		{"ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.5", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ns\ndata:\n  namespace: shop\n"},
		{"ghcr.io/kptdev/krm-functions-catalog/apply-replacements:v0.1.5", string(pkg["replacements.yaml"])},
		{"ghcr.io/kptdev/krm-functions-catalog/starlark:v0.5.5", string(pkg["tier.yaml"])},
	}
	b.ReportAllocs()
	for b.Loop() {
		cur := make([]*yaml.RNode, len(items))
		for i, it := range items {
			cur[i] = it.Copy()
		}
		for _, s := range steps {
			f, ok := Lookup(s.image)
			if !ok {
				b.Fatalf("no built-in for %s", s.image)
			}
			var err error
			if cur, _, err = f.Process(cur, yaml.MustParse(s.config)); err != nil {
				b.Fatalf("%s: %v", s.image, err)
			}
		}
		if got := cur[0].GetLabels()["tier"]; got != "web" {
			b.Fatalf("the pipeline did not run: %v", cur[0].MustString())
		}
	}
}
