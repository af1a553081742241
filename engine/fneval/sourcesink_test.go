package fneval

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var sourcePkg = map[string]string{
	"Kptfile":         "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: root\n",
	"cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # keep\ndata:\n  k: v\n",
	"sub/Kptfile":     "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n",
	"sub/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n",
	"notes.txt":       "not a resource\n",
}

// TestSourceSinkRoundTrip checks that fn source lists every resource of the
// package, subpackages and Kptfiles included, with kpt's path annotations,
// and that fn sink writes them back file for file.
func TestSourceSinkRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := t.TempDir()
	writeFiles(t, src, sourcePkg)
	var list, warn bytes.Buffer
	if err := Source(ctx, &list, &warn, []string{src}, SourceOptions{}); err != nil {
		t.Fatal(err)
	}
	out := list.String()
	if !strings.HasPrefix(out, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n") {
		t.Fatalf("not a ResourceList:\n%s", out)
	}
	for _, want := range []string{"config.kubernetes.io/path: 'sub/deploy.yaml'", "config.kubernetes.io/path: 'sub/Kptfile'", "config.kubernetes.io/path: 'Kptfile'", "name: a # keep"} {
		if !strings.Contains(out, want) {
			t.Errorf("source output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not a resource") {
		t.Errorf("source read a non-YAML file:\n%s", out)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := Sink(ctx, strings.NewReader(out), dst); err != nil {
		t.Fatal(err)
	}
	for name, content := range sourcePkg {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if name == "notes.txt" {
			if err == nil {
				t.Errorf("sink wrote %s", name)
			}
			continue
		}
		if err != nil || string(got) != content {
			t.Errorf("%s after sink = %q, %v; want %q", name, got, err, content)
		}
	}
	// kpt's rule: sink never writes into a directory that exists, even an empty one.
	if err := Sink(ctx, strings.NewReader(out), t.TempDir()); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("sink into an existing directory: %v", err)
	}
}

// TestSourceOutputAndFnConfig checks -o unwrap (plain YAML without kpt's
// annotations), --fn-config (the list's functionConfig) and the refusals.
func TestSourceOutputAndFnConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := t.TempDir()
	writeFiles(t, src, sourcePkg)
	var out bytes.Buffer
	if err := Source(ctx, &out, &out, []string{src}, SourceOptions{Output: "unwrap"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "ResourceList") || strings.Contains(out.String(), "config.kubernetes.io/path") || !strings.Contains(out.String(), "---\n") {
		t.Errorf("unwrap output:\n%s", out.String())
	}
	cfgDir := t.TempDir()
	cfg := filepath.Join(cfgDir, "fn.yaml")
	writeFiles(t, cfgDir, map[string]string{"fn.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn-cfg\ndata:\n  namespace: x\n"})
	out.Reset()
	if err := Source(ctx, &out, &out, []string{src}, SourceOptions{FnConfig: cfg}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn-cfg") {
		t.Errorf("no functionConfig:\n%s", out.String())
	}
	writeFiles(t, cfgDir, map[string]string{"two.yaml": "a: 1\n---\nb: 2\n"})
	if err := Source(ctx, &out, &out, []string{src}, SourceOptions{FnConfig: filepath.Join(cfgDir, "two.yaml")}); err == nil || !strings.Contains(err.Error(), "expected exactly 1 functionConfig, found 2") {
		t.Errorf("two function configs: %v", err)
	}
	if err := Source(ctx, &out, &out, []string{src}, SourceOptions{Output: "json"}); err == nil || !strings.Contains(err.Error(), `invalid input for --output flag "json"`) {
		t.Errorf("-o json: %v", err)
	}
}
