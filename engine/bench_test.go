package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/engine/internal/enginetest"
	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/engine/render"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/internal/gitfixture"
)

func benchRender(b *testing.B, n int) { benchRenderWith(b, n, render.RenderOptions{}) }

func benchRenderWith(b *testing.B, n int, opts render.RenderOptions) {
	benchRenderTree(b, enginetest.GenPackage(n, 1), opts)
}

func benchRenderTree(b *testing.B, in kptpkg.Tree, opts render.RenderOptions) {
	ctx := context.Background()
	size := 0
	for _, c := range in {
		size += len(c)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := render.RenderTree(ctx, in, opts)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Modified) == 0 {
			b.Fatal("render changed nothing")
		}
	}
}

// BenchmarkRender1k renders 1,000 resources through 5 built-in functions.
func BenchmarkRender1k(b *testing.B) { benchRender(b, 1000) }

// BenchmarkRender10k renders 10,000 resources through 5 built-in functions.
func BenchmarkRender10k(b *testing.B) { benchRender(b, 10000) }

// BenchmarkRenderReplacements10k renders 10,000 resources through
// set-namespace, apply-replacements and set-labels (streamed).
func BenchmarkRenderReplacements10k(b *testing.B) {
	benchRenderTree(b, enginetest.GenReplacementsPackage(10000), render.RenderOptions{})
}

// BenchmarkRenderReplacements10kWholeList is the same, whole-list.
func BenchmarkRenderReplacements10kWholeList(b *testing.B) {
	benchRenderTree(b, enginetest.GenReplacementsPackage(10000), render.RenderOptions{WholeList: true})
}

// BenchmarkRender10kWholeList is BenchmarkRender10k without the streamed
// render: the hydrator with every resource in memory, which pipelines
// with functions relating resources (apply-replacements, starlark) take.
func BenchmarkRender10kWholeList(b *testing.B) {
	benchRenderWith(b, 10000, render.RenderOptions{WholeList: true})
}

// treeFetcher serves fixed trees: origin at commit "origin", updated at any
// other version. It isolates the merge from git.
type treeFetcher struct{ origin, updated kptpkg.Tree }

func (f treeFetcher) Fetch(_ context.Context, _, _, version string) (map[string][]byte, fetch.Resolved, error) {
	if version == "origin" {
		return f.origin, fetch.Resolved{Ref: "origin", Commit: "origin"}, nil
	}
	return f.updated, fetch.Resolved{Ref: version, Commit: "updated"}, nil
}

const benchUpdateN = 1000

// BenchmarkUpdate1k runs a resource-merge update of a 1,000-resource
// package whose every resource changed upstream (the worst case: every
// resource goes through kyaml's 3-way merge walker).
func BenchmarkUpdate1k(b *testing.B) {
	benchUpdate(b, enginetest.GenPackage(benchUpdateN, 1), enginetest.GenPackage(benchUpdateN, 2))
}

// BenchmarkUpdate1kTypical updates a 1,000-resource package where
// upstream changed one file in ten, as a typical release does.
func BenchmarkUpdate1kTypical(b *testing.B) {
	origin, all := enginetest.GenPackage(benchUpdateN, 1), enginetest.GenPackage(benchUpdateN, 2)
	updated := kptpkg.Tree{}
	i := 0
	for _, p := range origin.Paths() {
		updated[p] = origin[p]
		if p != kptpkg.KptfileName && i%10 == 0 {
			updated[p] = all[p]
		}
		i++
	}
	benchUpdate(b, origin, updated)
}

func benchUpdate(b *testing.B, origin, updated kptpkg.Tree) {
	dir := filepath.Join(b.TempDir(), "pkg")
	local := kptpkg.Tree{}
	for p, c := range origin {
		local[p] = c
	}
	local[kptpkg.KptfileName] = []byte(string(origin[kptpkg.KptfileName]) + `upstream:
  type: git
  git:
    repo: bench
    directory: /
    ref: origin
  updateStrategy: resource-merge
upstreamLock:
  type: git
  git:
    repo: bench
    directory: /
    ref: origin
    commit: origin
`)
	f := treeFetcher{origin: origin, updated: updated}
	ctx := context.Background()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		os.RemoveAll(dir)
		if err := local.Write(dir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := processCPU()
		res, err := Update(ctx, f, dir, UpdateOptions{Version: "v2"})
		cpu += processCPU() - start
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Modified) < 10 {
			b.Fatalf("update modified only %d files", len(res.Modified))
		}
	}
	// CPU time (all threads, GC included) varies less than wall time on a
	// machine shared with other builds.
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}

// BenchmarkUpdateVsKpt runs the same git-backed update with kptbot and with
// the kpt CLI (skipped when kpt is not installed); compare the two ns/op.
func BenchmarkUpdateVsKpt(b *testing.B) {
	gitfixture.RequireGit(b)
	root := b.TempDir()
	bare := filepath.Join(root, "up.git")
	gitfixture.Git(b, root, "init", "-q", "--bare", "-b", "main", bare)
	wt := gitfixture.WorkTree(b, bare)
	for v, rep := range map[string]int{"pkg/v1": 1} {
		if err := enginetest.GenPackage(1000, rep).Write(filepath.Join(wt, "pkg")); err != nil {
			b.Fatal(err)
		}
		gitfixture.CommitAndTag(b, wt, v, v)
	}
	if err := enginetest.GenPackage(1000, 2).Write(filepath.Join(wt, "pkg")); err != nil {
		b.Fatal(err)
	}
	gitfixture.CommitAndTag(b, wt, "v2", "pkg/v2")
	repo := "file://" + strings.TrimSuffix(bare, ".git")
	ctx := context.Background()
	prepare := func(b *testing.B) string {
		ws := filepath.Join(b.TempDir(), "ws")
		os.MkdirAll(ws, 0o755)
		gitfixture.Git(b, ws, "init", "-q")
		if _, err := Get(ctx, fetch.NewClient(), filepath.Join(ws, "pkg"), GetOptions{Repo: repo, Dir: "/pkg", Version: "v1"}); err != nil {
			b.Fatal(err)
		}
		gitfixture.Git(b, ws, "add", "-A")
		gitfixture.Git(b, ws, "commit", "-q", "-m", "get")
		return ws
	}
	b.Run("kptbot", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			ws := prepare(b)
			b.StartTimer()
			if _, err := Update(ctx, fetch.NewClient(), filepath.Join(ws, "pkg"), UpdateOptions{Version: "v2"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kpt", func(b *testing.B) {
		kpt, err := exec.LookPath("kpt")
		if err != nil {
			b.Skip("kpt not installed")
		}
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			ws := prepare(b)
			b.StartTimer()
			cmd := exec.Command(kpt, "pkg", "update", "pkg@v2")
			cmd.Dir = ws
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("kpt pkg update: %v\n%s", err, out)
			}
		}
	})
}

// kptComparePipeline is a 5-function pipeline both kpt (as exec: binaries
// built from the catalog's Go modules) and kptbot (built-ins) can run.
const kptComparePipeline = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: bench
pipeline:
  mutators:
    - %s
      configMap:
        namespace: bench
    - %s
      configPath: star.yaml
    - %s
      configPath: repl.yaml
    - %s
      configPath: star.yaml
    - %s
      configMap:
        namespace: bench-final
`

const starConfig = `apiVersion: fn.kpt.dev/v1alpha1
kind: StarlarkRun
metadata:
  name: tier
  annotations:
    config.kubernetes.io/local-config: "true"
source: |
  for r in ctx.resource_list["items"]:
    r["metadata"].setdefault("labels", {})["tier"] = "gold"
`

const replConfig = `apiVersion: fn.kpt.dev/v1alpha1
kind: ApplyReplacements
metadata:
  name: repl
  annotations:
    config.kubernetes.io/local-config: "true"
replacements:
  - source:
      kind: ConfigMap
      name: cm-2
      fieldPath: data.key
    targets:
      - select:
          kind: ConfigMap
        fieldPaths:
          - data.copied
        options:
          create: true
`

// BenchmarkRenderVsKpt renders the same 1,000-resource package with the
// same five catalog functions through kptbot's built-ins and through the
// kpt CLI with exec: binaries; compare the two ns/op. Skipped cleanly when
// kpt or the go tool (to build the binaries) is missing.
func BenchmarkRenderVsKpt(b *testing.B) {
	pkg := enginetest.GenPackage(1000, 1)
	pkg["star.yaml"] = []byte(starConfig)
	pkg["repl.yaml"] = []byte(replConfig)
	img := func(name string) string { return "image: ghcr.io/kptdev/krm-functions-catalog/" + name }
	withImages := pkg
	withImages[kptpkg.KptfileName] = []byte(fmt.Sprintf(kptComparePipeline,
		img("set-namespace:v0.4.5"), img("starlark:v0.5.5"), img("apply-replacements:v0.1.5"), img("starlark:v0.5.5"), img("set-namespace:v0.4.5")))
	b.Run("kptbot", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "pkg")
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			os.RemoveAll(dir)
			if err := withImages.Write(dir); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := render.Render(context.Background(), dir, render.RenderOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kpt", func(b *testing.B) {
		kpt, err := exec.LookPath("kpt")
		if err != nil {
			b.Skip("kpt not installed")
		}
		bins := b.TempDir()
		for _, f := range []string{"set-namespace", "starlark", "apply-replacements"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(bins, f), "github.com/kptdev/krm-functions-catalog/functions/go/"+f)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Skipf("building %s: %v\n%s", f, err, out)
			}
		}
		ex := func(name string) string { return "exec: " + filepath.Join(bins, name) }
		withExec := kptpkg.Tree{}
		for p, c := range pkg {
			withExec[p] = c
		}
		withExec[kptpkg.KptfileName] = []byte(fmt.Sprintf(kptComparePipeline,
			ex("set-namespace"), ex("starlark"), ex("apply-replacements"), ex("starlark"), ex("set-namespace")))
		dir := filepath.Join(b.TempDir(), "pkg")
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			os.RemoveAll(dir)
			if err := withExec.Write(dir); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			cmd := exec.Command(kpt, "fn", "render", dir, "--allow-exec")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("kpt fn render: %v\n%s", err, out)
			}
		}
	})
}
