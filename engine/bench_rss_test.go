package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"syscall"
	"testing"
)

// BenchmarkRenderPeakRSS measures what the README's memory figures are:
// the peak resident set of the kptbot CLI (`kptbot fn render DIR`, built
// from this tree) on the generated 1,000- and 10,000-resource packages,
// next to the CLI's baseline (`kptbot version`). It reports peak-MB,
// baseline-MB, and the package's share (peak minus baseline) as a
// multiple of the package's size on disk (share-x-pkg; the target is
// <= 20): the highest peak and the lowest baseline over the runs, so the
// share is an upper bound. Peak RSS comes from the kernel's rusage
// (ru_maxrss), as /usr/bin/time -v reports it.
func BenchmarkRenderPeakRSS(b *testing.B) {
	if goruntime.GOOS != "linux" {
		b.Skip("ru_maxrss is in kilobytes on Linux only")
	}
	bin := filepath.Join(b.TempDir(), "kptbot")
	build := exec.Command("go", "build", "-o", bin, "../cmd/kptbot")
	if out, err := build.CombinedOutput(); err != nil {
		b.Skipf("building the CLI: %v\n%s", err, out)
	}
	peak := func(b *testing.B, args ...string) float64 {
		cmd := exec.Command(bin, args...)
		cmd.Env = os.Environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("kptbot %v: %v\n%s", args, err, out)
		}
		return float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
	}
	for _, n := range []struct {
		name string
		size int
	}{{"1k", 1000}, {"10k", 10000}} {
		b.Run(n.name, func(b *testing.B) {
			pkg := genPackage(n.size, 1)
			size := 0
			for _, c := range pkg {
				size += len(c)
			}
			dir := filepath.Join(b.TempDir(), "pkg")
			var top float64
			base := 1e9
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				os.RemoveAll(dir)
				if err := pkg.Write(dir); err != nil {
					b.Fatal(err)
				}
				base = min(base, peak(b, "version"))
				b.StartTimer()
				top = max(top, peak(b, "fn", "render", dir))
			}
			b.ReportMetric(top, "peak-MB")
			b.ReportMetric(base, "baseline-MB")
			b.ReportMetric((top-base)*1024*1024/float64(size), "share-x-pkg")
		})
	}
}
