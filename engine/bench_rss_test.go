package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/internal/enginetest"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

// maxRSSProgram runs its arguments as a command and prints the command's
// peak resident set in kilobytes (ru_maxrss), like /usr/bin/time's %M.
const maxRSSProgram = `package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
}
`

// BenchmarkRenderPeakRSS measures what the README's memory figures are:
// the peak resident set of the kptbot CLI (`kptbot fn render DIR`, built
// from this tree) on the generated 1,000- and 10,000-resource packages,
// next to two baselines: the CLI doing nothing (`kptbot version`) and the
// same render of a 10-resource package (the binary plus the render
// machinery: the package's pipeline set up, the GC's minimum heap). It
// reports peak-MB, baseline-MB, tiny-MB, and the package's share as a
// multiple of its size on disk, over each baseline (share-x-pkg over
// `version`, render-share-x-pkg over the tiny render; the target is
// <= 20): the highest peak and the lowest baselines over the runs, so the
// shares are upper bounds. Peak RSS comes from the kernel's rusage
// (ru_maxrss), as /usr/bin/time -v reports it, taken the way time takes
// it: from a small intermediate process. (A child exec'd straight from
// this test inherits the test's own high-water mark, because Go starts
// children with vfork semantics and Linux charges the old address
// space's peak to the child at exec: every figure would be at least the
// test binary's size.)
func BenchmarkRenderPeakRSS(b *testing.B) {
	peak := rssMeter(b)
	for _, n := range []struct {
		name string
		pkg  kptpkg.Tree
	}{{"1k", enginetest.GenPackage(1000, 1)}, {"10k", enginetest.GenPackage(10000, 1)}, {"10k-replacements", enginetest.GenReplacementsPackage(10000)}} {
		b.Run(n.name, func(b *testing.B) {
			pkg := n.pkg
			size := 0
			for _, c := range pkg {
				size += len(c)
			}
			dir := filepath.Join(b.TempDir(), "pkg")
			tinyDir := filepath.Join(b.TempDir(), "tiny")
			var top float64
			base, tiny := 1e9, 1e9
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				os.RemoveAll(dir)
				os.RemoveAll(tinyDir)
				if err := pkg.Write(dir); err != nil {
					b.Fatal(err)
				}
				if err := enginetest.GenPackage(10, 1).Write(tinyDir); err != nil {
					b.Fatal(err)
				}
				base = min(base, peak(b, "version"))
				tiny = min(tiny, peak(b, "fn", "render", tinyDir))
				b.StartTimer()
				top = max(top, peak(b, "fn", "render", dir))
			}
			b.ReportMetric(top, "peak-MB")
			b.ReportMetric(base, "baseline-MB")
			b.ReportMetric(tiny, "tiny-MB")
			b.ReportMetric((top-base)*1024*1024/float64(size), "share-x-pkg")
			b.ReportMetric((top-tiny)*1024*1024/float64(size), "render-share-x-pkg")
		})
	}
}

// rssMeter builds the CLI from this tree and a small meter process, and
// returns a function that runs `kptbot ARGS...` and reports its peak RSS
// in MB.
func rssMeter(b *testing.B) func(b *testing.B, args ...string) float64 {
	if goruntime.GOOS != "linux" {
		b.Skip("ru_maxrss is in kilobytes on Linux only")
	}
	bin := filepath.Join(b.TempDir(), "kptbot")
	build := exec.Command("go", "build", "-o", bin, "../cmd/kptbot")
	if out, err := build.CombinedOutput(); err != nil {
		b.Skipf("building the CLI: %v\n%s", err, out)
	}
	meter := filepath.Join(b.TempDir(), "maxrss")
	src := filepath.Join(b.TempDir(), "maxrss.go")
	if err := os.WriteFile(src, []byte(maxRSSProgram), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-o", meter, src).CombinedOutput(); err != nil {
		b.Skipf("building the meter: %v\n%s", err, out)
	}
	return func(b *testing.B, args ...string) float64 {
		out, err := exec.Command(meter, append([]string{bin}, args...)...).Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			b.Fatalf("kptbot %v: %v\n%s%s", args, err, out, stderr)
		}
		kb, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil {
			b.Fatalf("meter output %q: %v", out, err)
		}
		return kb / 1024
	}
}

// BenchmarkUpdatePeakRSS measures `kptbot pkg get` and `kptbot pkg
// update` (resource-merge, every resource changed upstream) on the
// generated packages, from a local git repository with tags pkg/v1 and
// pkg/v2, as BenchmarkRenderPeakRSS measures render: get-peak-MB and
// peak-MB (the update), baseline-MB (`kptbot version`), tiny-MB (the same
// update of a 10-resource package: git, the Kptfile merge and kyaml's
// OpenAPI schema, which every update and get loads, ~25 MB), and the
// update's share of the package over each baseline.
func BenchmarkUpdatePeakRSS(b *testing.B) {
	gitfixture.RequireGit(b)
	peak := rssMeter(b)
	repo := func(b *testing.B, n int) string {
		root := b.TempDir()
		bare := filepath.Join(root, "up.git")
		gitfixture.Git(b, root, "init", "-q", "--bare", "-b", "main", bare)
		wt := gitfixture.WorkTree(b, bare)
		for v, rep := range []int{1, 2} {
			os.RemoveAll(filepath.Join(wt, "pkg"))
			if err := enginetest.GenPackage(n, rep).Write(filepath.Join(wt, "pkg")); err != nil {
				b.Fatal(err)
			}
			gitfixture.CommitAndTag(b, wt, fmt.Sprintf("v%d", v+1), fmt.Sprintf("pkg/v%d", v+1))
		}
		return "file://" + bare + "/pkg"
	}
	tinyRepo := repo(b, 10)
	for _, n := range []struct {
		name string
		size int
	}{{"1k", 1000}, {"10k", 10000}} {
		b.Run(n.name, func(b *testing.B) {
			size := 0
			for _, c := range enginetest.GenPackage(n.size, 1) {
				size += len(c)
			}
			url := repo(b, n.size)
			// update wants the package committed, as kpt does
			work := b.TempDir()
			gitfixture.Git(b, work, "init", "-q")
			commit := func() {
				gitfixture.Git(b, work, "add", "-A")
				gitfixture.Git(b, work, "-c", "user.email=bench@example.com", "-c", "user.name=bench", "commit", "-q", "-m", "get")
			}
			var top, get float64
			base, tiny := 1e9, 1e9
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir, tinyDir := filepath.Join(work, fmt.Sprint("pkg", i)), filepath.Join(work, fmt.Sprint("tiny", i))
				base = min(base, peak(b, "version"))
				peak(b, "pkg", "get", tinyRepo+"@v1", tinyDir)
				get = max(get, peak(b, "pkg", "get", url+"@v1", dir))
				commit()
				tiny = min(tiny, peak(b, "pkg", "update", tinyDir+"@v2"))
				b.StartTimer()
				top = max(top, peak(b, "pkg", "update", dir+"@v2"))
			}
			b.ReportMetric(get, "get-peak-MB")
			b.ReportMetric(top, "peak-MB")
			b.ReportMetric(base, "baseline-MB")
			b.ReportMetric(tiny, "tiny-MB")
			b.ReportMetric((top-base)*1024*1024/float64(size), "share-x-pkg")
			b.ReportMetric((top-tiny)*1024*1024/float64(size), "update-share-x-pkg")
		})
	}
}
