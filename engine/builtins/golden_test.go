package builtins

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kptbot/kptbot/internal/golden"
)

// update is the module's one -update flag: these golden files are
// compared here, but refreshed by the same flag as every other package's.
var update = golden.Update

// TestGolden runs every testdata/<function>/<case>/input.yaml through the
// built-in named by <function> and compares the ResourceList it writes with
// output.yaml and the error it returns with error.txt (absent when the run
// must succeed).
func TestGolden(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join("testdata", "*", "*", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no golden cases found")
	}
	seen := map[string]bool{}
	for _, in := range dirs {
		dir := filepath.Dir(in)
		name := filepath.Base(filepath.Dir(dir))
		seen[functionOf(name)] = true
		t.Run(name+"/"+filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			runGolden(t, name, dir)
		})
	}
	for _, f := range All() {
		if !seen[f.Name] {
			t.Errorf("built-in %s has no golden cases", f.Name)
		}
	}
}

// functionOf is the function a testdata directory is for: its name, or
// for "set-labels@v0.1" a version line of it.
func functionOf(dir string) string {
	name, _, _ := strings.Cut(dir, "@")
	return name
}

// imageOf is the image a testdata directory's cases run: "set-labels@v0.1"
// is set-labels:v0.1.
func imageOf(dir string) string { return strings.Replace(dir, "@", ":", 1) }

func runGolden(t *testing.T, name, dir string) {
	f, ok := Lookup(imageOf(name))
	if !ok {
		t.Fatalf("Lookup(%q) found nothing", name)
	}
	input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	runErr := f.Run(bytes.NewReader(input), &out)

	outPath, errPath := filepath.Join(dir, "output.yaml"), filepath.Join(dir, "error.txt")
	if *update {
		writeGolden(t, outPath, out.Bytes())
		if runErr != nil {
			writeGolden(t, errPath, []byte(runErr.Error()+"\n"))
		} else if err := os.Remove(errPath); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return
	}

	want, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatalf("missing golden output (run go test ./engine/builtins -update): %v", err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("output differs from %s (-want +got):\n%s", outPath, diff)
	}
	wantErr, err := os.ReadFile(errPath)
	switch {
	case os.IsNotExist(err):
		if runErr != nil {
			t.Errorf("unexpected error: %v", runErr)
		}
	case err != nil:
		t.Fatal(err)
	case runErr == nil:
		t.Errorf("expected error %q, got none", strings.TrimSpace(string(wantErr)))
	case runErr.Error() != strings.TrimSpace(string(wantErr)):
		t.Errorf("error = %q, want %q", runErr.Error(), strings.TrimSpace(string(wantErr)))
	case !strings.HasPrefix(runErr.Error(), functionOf(name)+": "):
		t.Errorf("error %q does not name the function", runErr)
	}
	if runErr != nil && !strings.Contains(out.String(), "severity: error") {
		t.Errorf("failed run wrote no error result:\n%s", out.String())
	}
}

func writeGolden(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSkipIsInvisible runs the golden inputs of functions that leave
// irrelevant items unparsed with and without that shortcut: the output must
// be the same.
func TestSkipIsInvisible(t *testing.T) {
	t.Parallel()
	for _, f := range All() {
		if f.skip == nil {
			continue
		}
		inputs, _ := filepath.Glob(filepath.Join("testdata", f.Name, "*", "input.yaml"))
		inputs = append(inputs, "generated")
		for _, p := range inputs {
			in := generateResourceList(40)
			if p != "generated" {
				var err error
				if in, err = os.ReadFile(p); err != nil {
					t.Fatal(err)
				}
			} else {
				in = withConfig(in, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  name: nginx\n  newTag: \"2\"\n  replicas: \"1\"\n")
			}
			full := f
			full.skip = nil
			var a, b bytes.Buffer
			errA := f.Run(bytes.NewReader(in), &a)
			errB := full.Run(bytes.NewReader(in), &b)
			if (errA == nil) != (errB == nil) {
				t.Errorf("%s %s: error with skip %v, without %v", f.Name, p, errA, errB)
			}
			if diff := cmp.Diff(b.String(), a.String()); diff != "" {
				t.Errorf("%s %s: skipping changed the output (-full +skip):\n%s", f.Name, p, diff)
			}
		}
	}
}
