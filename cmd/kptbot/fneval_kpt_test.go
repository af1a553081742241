package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// evalFixture is a package with a subpackage, comments, and resources that
// selectors tell apart.
var evalFixture = kptpkg.Tree{
	"Kptfile": []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ninfo:\n  description: sample description\n"),
	"app.yaml": []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    tier: front
spec:
  replicas: 1 # keep me
---
apiVersion: v1
kind: Service
metadata:
  name: web
  labels:
    tier: back
`),
	"fns/ns.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ns-config\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  namespace: from-config\n"),
	"db/Kptfile":  []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: db\n"),
	"db/cm.yaml":  []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db\n  namespace: old\n  labels:\n    tier: back\ndata:\n  a: \"1\"\n"),
}

// catalogExec builds a catalog function from its Go module, for kpt's
// exec runtime.
func catalogExec(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, "github.com/kptdev/krm-functions-catalog/functions/go/"+name)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("building %s: %v\n%s", name, err, out)
	}
	return bin
}

// TestEvalMatchesKpt runs the same evals with kptbot and the kpt CLI (an
// exec: function built from the catalog) and compares the packages, the
// -o outputs and the Kptfiles --save writes.
func TestEvalMatchesKpt(t *testing.T) {
	t.Parallel()
	kpt, err := exec.LookPath("kpt")
	if err != nil {
		t.Skip("kpt CLI not installed")
	}
	setNS := catalogExec(t, "set-namespace")
	type tc struct {
		name  string
		args  []string // after PKG; "@PKG" is replaced by the package path
		stdin string   // a file of the package to feed as "-" input
	}
	cases := []tc{
		{"all", []string{"--", "namespace=prod"}, ""},
		{"match kind", []string{"--match-kind", "Deployment", "--", "namespace=prod"}, ""},
		{"match labels, exclude kind", []string{"--match-labels", "tier=back", "--exclude-kind", "ConfigMap", "--", "namespace=prod"}, ""},
		{"match namespace and api version", []string{"--match-namespace", "old", "--match-api-version", "v1", "--", "namespace=prod"}, ""},
		{"exclude annotations", []string{"--exclude-annotations", "config.kubernetes.io/local-config=true", "--", "namespace=prod"}, ""},
		{"fn-config", []string{"--fn-config", "@PKG/fns/ns.yaml"}, ""},
		{"unwrap", []string{"-o", "unwrap", "--match-name", "web", "--", "namespace=prod"}, ""},
		{"stdout", []string{"-o", "stdout", "--", "namespace=prod"}, ""},
		{"out dir", []string{"-o", "@OUT", "--", "namespace=prod"}, ""},
		{"stdin stream", []string{"--", "namespace=piped"}, "app.yaml"},
		{"stdin subset", []string{"--match-kind", "Service", "-o", "unwrap", "--", "namespace=piped"}, "app.yaml"},
		{"save validator", []string{"-s", "-t", "validator", "--fn-config", "@PKG/fns/ns.yaml", "--match-kind", "Service"}, ""},
		{"save mutator", []string{"-s", "-t", "mutator", "--exclude-name", "db", "--", "namespace=saved"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var trees [2]kptpkg.Tree
			var outs, errs [2]string
			for i, tool := range []string{"kptbot", "kpt"} {
				root := t.TempDir()
				pkg := filepath.Join(root, "pkg")
				if err := evalFixture.Write(pkg); err != nil {
					t.Fatal(err)
				}
				outDir := filepath.Join(root, "out")
				target := pkg
				var stdin []byte
				if c.stdin != "" {
					target, stdin = "-", evalFixture[c.stdin]
				}
				args := []string{"fn", "eval", target, "--exec", setNS}
				for _, a := range c.args {
					a = strings.ReplaceAll(a, "@PKG", pkg)
					args = append(args, strings.ReplaceAll(a, "@OUT", outDir))
				}
				var out bytes.Buffer
				if tool == "kpt" {
					cmd := exec.Command(kpt, args...)
					cmd.Stdin, cmd.Stdout = bytes.NewReader(stdin), &out
					var errb bytes.Buffer
					cmd.Stderr = &errb
					if err := cmd.Run(); err != nil {
						t.Fatalf("kpt %v: %v\n%s", args, err, errb.String())
					}
					errs[i] = errb.String()
				} else {
					var errb bytes.Buffer
					code := runWithInput(append([]string{"fn", "eval", "--allow-exec"}, args[2:]...), bytes.NewReader(stdin), &out, &errb)
					if code != 0 {
						t.Fatalf("kptbot %v: exit %d\n%s", args, code, errb.String())
					}
					errs[i] = errb.String()
				}
				outs[i] = out.String()
				tr, err := kptpkg.ReadTree(pkg)
				if err != nil {
					t.Fatal(err)
				}
				if o, err := kptpkg.ReadTree(outDir); err == nil {
					for p, b := range o {
						tr["OUT/"+p] = b
					}
				}
				trees[i] = tr
			}
			// --save's report ("Added ... as validator in the Kptfile.").
			for _, l := range strings.Split(errs[1], "\n") {
				if (strings.HasPrefix(l, "Added ") || strings.HasPrefix(l, "Updated ")) && !strings.Contains(errs[0], l) {
					t.Errorf("kpt reports %q, kptbot:\n%s", l, errs[0])
				}
			}
			if outs[0] != outs[1] {
				t.Errorf("output differs from kpt's:\nkptbot:\n%s\nkpt:\n%s", outs[0], outs[1])
			}
			for _, p := range trees[1].Paths() {
				if !bytes.Equal(trees[0][p], trees[1][p]) {
					t.Errorf("%s differs from kpt's:\nkptbot:\n%s\nkpt:\n%s", p, trees[0][p], trees[1][p])
				}
			}
			if len(trees[0]) != len(trees[1]) {
				t.Errorf("kptbot wrote %v, kpt %v", trees[0].Paths(), trees[1].Paths())
			}
		})
	}
}

// TestEvalErrorsMatchKpt checks that kptbot refuses what kpt refuses, with
// kpt's message.
func TestEvalErrorsMatchKpt(t *testing.T) {
	t.Parallel()
	kpt, err := exec.LookPath("kpt")
	if err != nil {
		t.Skip("kpt CLI not installed")
	}
	pkg := filepath.Join(t.TempDir(), "pkg")
	if err := evalFixture.Write(pkg); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--exec", "/bin/cat", "-m"},
		{"--exec", "/bin/cat", "-s"},
		{"--exec", "/bin/cat", "-s", "-t", "transformer"},
		{"--exec", "/bin/cat", "--network"},
		{"--exec", "/bin/cat", "--mount", "type=bind,src=/tmp,dst=/tmp"},
		{"--exec", "/bin/cat", "--as-current-user"},
		{"--exec", "/bin/cat", "-e", "A=b"},
		{"--exec", "/bin/cat", "--fn-config", filepath.Join(pkg, "nope.yaml")},
		{"--exec", "/bin/cat", "--fn-config", filepath.Join(pkg, "fns/ns.yaml"), "--", "a=b"},
		{"--exec", "/bin/cat", "-o", pkg},
		{},
		{"--exec", "/bin/cat", "--", "a=b", "broken"},
	} {
		full := append([]string{"fn", "eval", pkg}, args...)
		kout, _ := exec.Command(kpt, full...).CombinedOutput()
		var errb bytes.Buffer
		code := runWithInput(append([]string{"fn", "eval", "--allow-exec"}, full[2:]...), nil, &bytes.Buffer{}, &errb)
		want := ""
		for _, l := range strings.Split(string(kout), "\n") {
			if msg, ok := strings.CutPrefix(l, "error: "); ok {
				want = msg
			}
		}
		if want == "" {
			t.Fatalf("kpt %v did not fail:\n%s", args, kout)
		}
		if code == 0 || !strings.Contains(errb.String(), want) {
			t.Errorf("kptbot fn eval %v: exit %d, stderr %q; kpt says %q", args, code, errb.String(), want)
		}
	}
}

// runWithInput is run with a standard input.
func runWithInput(args []string, stdin *bytes.Reader, stdout, stderr *bytes.Buffer) int {
	root := newRootCmd(stdout, stderr)
	if stdin != nil {
		root.SetIn(stdin)
	}
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		stderr.WriteString("Error: " + err.Error() + "\n")
		return 1
	}
	return 0
}
