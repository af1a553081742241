package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/golden"
)

// fnScript writes an executable shell script for an exec: function.
func fnScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// processCases are packages kptbot's hydrator once left to kpt's renderer:
// exec and container functions (mutators, validators, selections,
// generators, comments the function dropped, results, stderr, failures),
// top-down order, Config Connector attribution, and Kptfiles kpt's
// validation refuses.
func processCases(t *testing.T) (map[string]kptpkg.Tree, string) {
	t.Helper()
	bin := t.TempDir()
	relabel := fnScript(t, bin, "relabel", "sed 's/tier: web/tier: changed/'\n")
	uncomment := fnScript(t, bin, "uncomment", "sed 's/ #.*$//'\n")
	generate := fnScript(t, bin, "generate", "sed '/^items:/a\\\n- apiVersion: v1\\\n  kind: ConfigMap\\\n  metadata:\\\n    name: generated\\\n  data:\\\n    k: v'\n")
	report := fnScript(t, bin, "report", "cat\necho 'note on stderr' >&2\nprintf 'results:\\n- message: checked\\n  severity: warning\\n  resourceRef:\\n    apiVersion: v1\\n    kind: ConfigMap\\n    name: cm\\n'\n")
	fail := fnScript(t, bin, "fail", "cat >/dev/null\necho 'first line' >&2\necho 'it broke' >&2\nexit 3\n")
	engine := fnScript(t, bin, "docker", "if [ \"$1\" = version ]; then echo 24.0.7; exit 0; fi\nsed 's/tier: web/tier: boxed/'\n")
	kptfile := func(name, extra string) []byte {
		return []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + name + "\n" + extra)
	}
	deploy := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # the web tier\n  labels:\n    tier: web\nspec:\n  replicas: 2 # two\n")
	cm := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  tier: web\n")
	pipeline := func(fns string) string { return "pipeline:\n  mutators:\n" + fns }
	cases := map[string]kptpkg.Tree{
		"exec-mutator":      {kptpkg.KptfileName: kptfile("app", pipeline("    - exec: "+relabel+"\n")), "deploy.yaml": deploy, "cm.yaml": cm},
		"exec-comments":     {kptpkg.KptfileName: kptfile("app", pipeline("    - exec: "+uncomment+"\n")), "deploy.yaml": deploy},
		"exec-generator":    {kptpkg.KptfileName: kptfile("app", pipeline("    - exec: "+generate+"\n")), "deploy.yaml": deploy},
		"exec-results":      {kptpkg.KptfileName: kptfile("app", pipeline("    - exec: "+report+"\n")), "cm.yaml": cm},
		"exec-fails":        {kptpkg.KptfileName: kptfile("app", pipeline("    - image: set-labels:v0.2\n      configMap:\n        a: b\n    - exec: "+fail+"\n")), "cm.yaml": cm},
		"exec-selector":     {kptpkg.KptfileName: kptfile("app", pipeline("    - exec: "+relabel+"\n      selectors:\n        - kind: ConfigMap\n")), "deploy.yaml": deploy, "cm.yaml": cm},
		"exec-validator":    {kptpkg.KptfileName: kptfile("app", "pipeline:\n  validators:\n    - exec: "+report+"\n"), "cm.yaml": cm},
		"exec-config-path":  {kptpkg.KptfileName: kptfile("app", pipeline("    - exec: "+relabel+"\n      configPath: cm.yaml\n")), "cm.yaml": cm, "deploy.yaml": deploy},
		"exec-and-builtins": {kptpkg.KptfileName: kptfile("app", pipeline("    - image: set-namespace:v0.4\n      configMap:\n        namespace: prod\n    - exec: "+relabel+"\n    - image: set-labels:v0.2\n      configMap:\n        app: x\n")), "deploy.yaml": deploy, "cm.yaml": cm},
		"exec-in-subpackage": {kptpkg.KptfileName: kptfile("app", pipeline("    - image: set-namespace:v0.4\n      configMap:\n        namespace: prod\n")), "cm.yaml": cm,
			"db/Kptfile": kptfile("db", pipeline("    - exec: "+relabel+"\n")), "db/deploy.yaml": deploy},
		"container": {kptpkg.KptfileName: kptfile("app", pipeline("    - image: example.com/fns/relabel:v1\n")), "deploy.yaml": deploy},
		"bfs": {kptpkg.KptfileName: kptfile("app", "  annotations:\n    kpt.dev/bfs-rendering: \"true\"\n"+pipeline("    - image: set-labels:v0.2\n      configMap:\n        level: root\n")), "cm.yaml": cm,
			"a/Kptfile": kptfile("a", pipeline("    - image: set-namespace:v0.4\n      configMap:\n        namespace: a\n")), "a/deploy.yaml": deploy,
			"a/b/Kptfile": kptfile("b", pipeline("    - image: set-labels:v0.2\n      configMap:\n        level: b\n")), "a/b/cm.yaml": cm,
			"c/Kptfile": kptfile("c", ""), "c/cm.yaml": cm},
		"bfs-exec": {kptpkg.KptfileName: kptfile("app", "  annotations:\n    kpt.dev/bfs-rendering: \"true\"\n"+pipeline("    - exec: "+generate+"\n")), "cm.yaml": cm,
			"a/Kptfile": kptfile("a", pipeline("    - image: set-namespace:v0.4\n      configMap:\n        namespace: a\n")), "a/deploy.yaml": deploy},
		"cnrm": {kptpkg.KptfileName: kptfile("app", pipeline("    - image: set-namespace:v0.4\n      configMap:\n        namespace: prod\n")),
			"bucket.yaml": []byte("apiVersion: storage.cnrm.cloud.google.com/v1beta1\nkind: StorageBucket\nmetadata:\n  name: b\n  annotations:\n    cnrm.cloud.google.com/blueprint: cnrm/lz/v1,krm-pkg\n"),
			"other.yaml":  []byte("apiVersion: iam.cnrm.cloud.google.com/v1beta1\nkind: IAMPolicy\nmetadata:\n  name: p\n"), "cm.yaml": cm},
		"invalid-image":             {kptpkg.KptfileName: kptfile("app", pipeline("    - image: Not_Valid:!!\n")), "cm.yaml": cm},
		"config-outside":            {kptpkg.KptfileName: kptfile("app", pipeline("    - image: set-labels:v0.2\n      configPath: ../cm.yaml\n")), "cm.yaml": cm},
		"subpackage-missing-config": {kptpkg.KptfileName: kptfile("app", ""), "cm.yaml": cm, "db/Kptfile": kptfile("db", pipeline("    - image: set-labels:v0.2\n      configPath: nope.yaml\n")), "db/cm.yaml": cm},
		"config-krmignored": {kptpkg.KptfileName: kptfile("app", pipeline("    - image: set-labels:v0.2\n      configPath: fns/cfg.yaml\n")), "cm.yaml": cm, ".krmignore": []byte("fns/\n"),
			"fns/cfg.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: b\n")},
	}
	return cases, engine
}

// TestHydratorMatchesKptOnProcesses renders processCases with kptbot's
// hydrator and with kpt's renderer, and requires the same files, the
// same results (image or exec, exit code, stderr, structured results)
// and the same error; a function process that fails is reported by kpt
// as "already handled" (it printed the stderr), by kptbot with its exit
// code and stderr, so only the error's first line is compared there.
func TestHydratorMatchesKptOnProcesses(t *testing.T) {
	t.Parallel()
	cases, engine := processCases(t)
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			opts := RenderOptions{Runtimes: Runtimes{AllowExec: true, AllowContainers: true, ContainerEngine: engine}}
			fast, ferr := RenderTree(ctx, in, opts)
			opts.KptOnly = true
			kpt, kerr := RenderTree(ctx, in, opts)
			if (ferr == nil) != (kerr == nil) {
				t.Fatalf("kptbot error %v, kpt error %v", ferr, kerr)
			}
			if ferr != nil {
				t.Logf("both failed: %v", firstLine(lastLine(ferr.Error())))
				if firstLine(ferr.Error()) != firstLine(kerr.Error()) ||
					(lastLine(ferr.Error()) != lastLine(kerr.Error()) && !strings.HasSuffix(kerr.Error(), "already handled error")) {
					t.Errorf("errors differ:\nkptbot: %v\nkpt:    %v", ferr, kerr)
				}
				if strings.HasSuffix(kerr.Error(), "already handled error") && !strings.Contains(ferr.Error(), "it broke") {
					t.Errorf("kptbot's error does not say what the function wrote to stderr: %v", ferr)
				}
			} else {
				golden.SameTrees(t, "kpt vs kptbot", kpt.Tree, fast.Tree)
			}
			fr, kr := fast.Results, kpt.Results
			if fr == nil || kr == nil {
				if (fr == nil) != (kr == nil) {
					t.Fatalf("results: kptbot %v, kpt %v", fr, kr)
				}
				return
			}
			if len(fr.Items) != len(kr.Items) || fr.ExitCode != kr.ExitCode {
				t.Fatalf("results: kptbot %d items exit %d, kpt %d items exit %d (errors: %v; %v)", len(fr.Items), fr.ExitCode, len(kr.Items), kr.ExitCode, ferr, kerr)
			}
			for i := range fr.Items {
				f, k := fr.Items[i], kr.Items[i]
				if f.Image != k.Image || f.ExecPath != k.ExecPath || f.ExitCode != k.ExitCode || f.Stderr != k.Stderr || len(f.Results) != len(k.Results) {
					t.Errorf("result %d: kptbot %+v, kpt %+v", i, f, k)
					continue
				}
				for j := range f.Results {
					if f.Results[j].String() != k.Results[j].String() {
						t.Errorf("result %d item %d: kptbot %s, kpt %s", i, j, f.Results[j], k.Results[j])
					}
				}
			}
		})
	}
}
