package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/internal/enginetest"
	"github.com/kptbot/kptbot/engine/kptpkg"
)

// processMeterProgram runs its arguments as a command and prints the
// command's peak resident set in kilobytes (ru_maxrss, as /usr/bin/time's
// %M) and its wall time in nanoseconds, measured around fork and wait
// only.
const processMeterProgram = `package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	elapsed := time.Since(start)
	fmt.Println(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, elapsed.Nanoseconds())
}
`

// processMeter builds a meter process and returns a function running
// ARGS through it: peak RSS in MB and wall time in ms.
func processMeter(b *testing.B) func(b *testing.B, args ...string) (mb, ms float64) {
	meter := filepath.Join(b.TempDir(), "meter")
	src := filepath.Join(b.TempDir(), "meter.go")
	if err := os.WriteFile(src, []byte(processMeterProgram), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-o", meter, src).CombinedOutput(); err != nil {
		b.Skipf("building the meter: %v\n%s", err, out)
	}
	return func(b *testing.B, args ...string) (float64, float64) {
		out, err := exec.Command(meter, args...).Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			b.Fatalf("%v: %v\n%s%s", args, err, out, stderr)
		}
		f := strings.Fields(string(out))
		if len(f) != 2 {
			b.Fatalf("meter output %q", out)
		}
		kb, err1 := strconv.ParseFloat(f[0], 64)
		ns, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			b.Fatalf("meter output %q", out)
		}
		return kb / 1024, ns / 1e6
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkCLIVsKpt measures what users wait for, whole processes side by
// side in one run, interleaved so machine load falls on both alike:
// `kptbot version` next to a Go hello-world (the floor of any Go CLI), and
// `fn render` of a fresh copy of enginetest.SmallPackage by the kptbot CLI (built-in
// functions) and by the kpt CLI with exec: binaries built from the same
// catalog modules. It reports medians over 7 runs per iteration:
// wall-clock ms and peak RSS MB of each, and kpt's time over kptbot's
// (render-speedup-x; the goal is >= 10). With KPTBOT_BASELINE naming an
// earlier kptbot binary, that binary's version and render run in the same
// rounds too (base-*), for before/after figures from one run. deps-only-*
// is a program that links exactly the third-party packages kptbot imports
// and prints a line: the start-up those dependencies' package
// initialisation costs every process, which no change to kptbot's own
// code can go below. Skipped cleanly without kpt or the go tool.
func BenchmarkCLIVsKpt(b *testing.B) {
	if goruntime.GOOS != "linux" {
		b.Skip("ru_maxrss is in kilobytes on Linux only")
	}
	kpt, err := exec.LookPath("kpt")
	if err != nil {
		b.Skip("kpt not installed")
	}
	run := processMeter(b)
	bins := b.TempDir()
	build := func(out string, args ...string) {
		cmd := exec.Command("go", append([]string{"build", "-o", filepath.Join(bins, out)}, args...)...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if o, err := cmd.CombinedOutput(); err != nil {
			b.Skipf("building %s: %v\n%s", out, err, o)
		}
	}
	build("kptbot", "../cmd/kptbot")
	hello := filepath.Join(b.TempDir(), "hello.go")
	if err := os.WriteFile(hello, []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	build("hello", hello)
	build("deps", depsOnlyProgram(b))
	const catalog = "github.com/kptdev/krm-functions-catalog/functions/go/"
	for _, f := range []string{"set-namespace", "apply-replacements", "starlark"} {
		build(f, catalog+f)
	}
	img := func(name string) string { return "image: ghcr.io/kptdev/krm-functions-catalog/" + name }
	ex := func(name string) string { return "exec: " + filepath.Join(bins, name) }
	ours := enginetest.SmallPackage(img("set-namespace:v0.4.5"), img("apply-replacements:v0.1.5"), img("starlark:v0.5.5"))
	theirs := enginetest.SmallPackage(ex("set-namespace"), ex("apply-replacements"), ex("starlark"))
	kptbot := filepath.Join(bins, "kptbot")
	dir := filepath.Join(b.TempDir(), "pkg")
	fresh := func(t kptpkg.Tree) {
		b.StopTimer()
		defer b.StartTimer()
		os.RemoveAll(dir)
		if err := t.Write(dir); err != nil {
			b.Fatal(err)
		}
	}
	var helloMs, helloMB, depsMs, depsMB, verMs, verMB, ourMs, ourMB, kptMs, kptMB, baseVerMs, baseVerMB, baseMs, baseMB []float64
	base := os.Getenv("KPTBOT_BASELINE")
	for i := 0; i < b.N*7; i++ {
		if base != "" {
			mb, ms := run(b, base, "version")
			baseVerMs, baseVerMB = append(baseVerMs, ms), append(baseVerMB, mb)
			fresh(ours)
			mb, ms = run(b, base, "fn", "render", dir)
			baseMs, baseMB = append(baseMs, ms), append(baseMB, mb)
		}
		mb, ms := run(b, filepath.Join(bins, "hello"))
		helloMs, helloMB = append(helloMs, ms), append(helloMB, mb)
		mb, ms = run(b, filepath.Join(bins, "deps"))
		depsMs, depsMB = append(depsMs, ms), append(depsMB, mb)
		mb, ms = run(b, kptbot, "version")
		verMs, verMB = append(verMs, ms), append(verMB, mb)
		fresh(ours)
		mb, ms = run(b, kptbot, "fn", "render", dir)
		ourMs, ourMB = append(ourMs, ms), append(ourMB, mb)
		fresh(theirs)
		mb, ms = run(b, kpt, "fn", "render", dir, "--allow-exec")
		kptMs, kptMB = append(kptMs, ms), append(kptMB, mb)
	}
	b.ReportMetric(median(helloMs), "hello-ms")
	b.ReportMetric(median(helloMB), "hello-MB")
	b.ReportMetric(median(depsMs), "deps-only-ms")
	b.ReportMetric(median(depsMB), "deps-only-MB")
	b.ReportMetric(median(verMs), "version-ms")
	b.ReportMetric(median(verMB), "version-MB")
	b.ReportMetric(median(ourMs), "render-ms")
	b.ReportMetric(median(ourMB), "render-MB")
	b.ReportMetric(median(kptMs), "kpt-render-ms")
	b.ReportMetric(median(kptMB), "kpt-render-MB")
	b.ReportMetric(median(kptMs)/median(ourMs), "render-speedup-x")
	if base != "" {
		b.ReportMetric(median(baseVerMs), "base-version-ms")
		b.ReportMetric(median(baseVerMB), "base-version-MB")
		b.ReportMetric(median(baseMs), "base-render-ms")
		b.ReportMetric(median(baseMB), "base-render-MB")
	}
}

// depsOnlyProgram writes, inside the module (so its go.mod pins the
// versions), a main package importing for their side effects exactly the
// third-party packages kptbot's own packages import, and returns its
// directory. Go initialises every linked package before main, so this
// program's start-up is the floor of kptbot's.
func depsOnlyProgram(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{if and .Module (eq .Module.Path "github.com/kptbot/kptbot")}}{{join .Imports "\n"}}{{end}}`, "../cmd/kptbot").Output()
	if err != nil {
		b.Skipf("go list: %v", err)
	}
	seen := map[string]bool{}
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n\t\"fmt\"\n")
	for _, imp := range strings.Fields(string(out)) {
		first, _, _ := strings.Cut(imp, "/")
		if seen[imp] || !strings.Contains(first, ".") || strings.HasPrefix(imp, "github.com/kptbot/kptbot") ||
			strings.Contains(imp, "/internal/") || strings.HasSuffix(imp, "/internal") {
			continue
		}
		seen[imp] = true
		fmt.Fprintf(&src, "\t_ %q\n", imp)
	}
	src.WriteString(")\n\nfunc main() { fmt.Println(\"kptbot\") }\n")
	dir, err := os.MkdirTemp("..", ".deps-only-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		b.Fatal(err)
	}
	return abs
}
