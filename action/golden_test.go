package action

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/<case>/want")

// recordingBot answers Handle and Reconcile from a case's bot.json and
// records every call.
type recordingBot struct {
	mu     sync.Mutex
	script botScript
	calls  []call
}

type botScript struct {
	Handle    scripted `json:"handle"`
	Reconcile scripted `json:"reconcile"`
}

type scripted struct {
	Outcome bot.Outcome `json:"outcome"`
	Error   string      `json:"error"`
}

type call struct {
	Setup     *setupRecord `json:"setup,omitempty"`
	Handle    *forge.Event `json:"handle,omitempty"`
	Reconcile *forge.Repo  `json:"reconcile,omitempty"`
}

// setupRecord is Setup without the logger.
type setupRecord struct {
	Forge, APIURL, ServerURL, Token, Config, Workspace string
	Repo                                               forge.Repo
	DryRun                                             bool
}

func (s scripted) result() (bot.Outcome, error) {
	if s.Error != "" {
		return s.Outcome, errors.New(s.Error)
	}
	return s.Outcome, nil
}

func (b *recordingBot) Handle(_ context.Context, ev forge.Event) (bot.Outcome, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, call{Handle: &ev})
	return b.script.Handle.result()
}

func (b *recordingBot) Reconcile(_ context.Context, r forge.Repo) (bot.Outcome, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, call{Reconcile: &r})
	return b.script.Reconcile.result()
}

// readEnvFile reads a case's recorded environment: KEY=VALUE lines, # for
// comments, with $CASE (the case directory), $REPO (the repository root)
// and $OUT (a fresh directory for the step's files) expanded.
func readEnvFile(t *testing.T, path string, vars map[string]string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is not KEY=VALUE", path, line)
		}
		for name, val := range vars {
			v = strings.ReplaceAll(v, "$"+name, val)
		}
		env[k] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return env
}

// TestGolden runs `kptbot action` for every recorded environment under
// testdata/ and compares what the bot was asked to do and everything the
// step wrote with the case's want/ directory.
func TestGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/*/env")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases under testdata: %v", err)
	}
	repoRoot, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, envPath := range cases {
		dir := filepath.Dir(envPath)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			caseDir, err := filepath.Abs(dir)
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			env := readEnvFile(t, envPath, map[string]string{"CASE": caseDir, "REPO": repoRoot, "OUT": out})
			rb := &recordingBot{}
			if b, err := os.ReadFile(filepath.Join(dir, "bot.json")); err == nil {
				dec := json.NewDecoder(bytes.NewReader(b))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&rb.script); err != nil {
					t.Fatalf("bot.json: %v", err)
				}
			}
			var stdout, stderr bytes.Buffer
			var setup *setupRecord
			_, runErr := Run(context.Background(), Options{
				Getenv: func(k string) string { return env[k] },
				Stdout: &stdout, Stderr: &stderr,
				NewBot: func(_ context.Context, s Setup) (Bot, error) {
					if s.Logger == nil {
						t.Error("Setup.Logger is nil")
					}
					setup = &setupRecord{Forge: s.Forge, APIURL: s.APIURL, ServerURL: s.ServerURL, Token: s.Token, Config: s.Config,
						Workspace: s.Workspace, Repo: s.Repo, DryRun: s.DryRun}
					return rb, nil
				},
			})
			got := map[string][]byte{"stdout.txt": stdout.Bytes()}
			result := "ok\n"
			if runErr != nil {
				result = "error: " + runErr.Error() + "\n"
			}
			got["result.txt"] = []byte(result)
			calls := append([]call{{Setup: setup}}, rb.calls...)
			cj, err := json.MarshalIndent(calls, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got["calls.json"] = append(cj, '\n')
			files, err := os.ReadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(out, f.Name()))
				if err != nil {
					t.Fatal(err)
				}
				got[f.Name()] = bytes.ReplaceAll(b, []byte(out), []byte("$OUT"))
			}
			for _, k := range []string{"INPUT_TOKEN", "GITHUB_TOKEN", "KPTBOT_TOKEN", "GITLAB_TOKEN", "CI_JOB_TOKEN"} {
				tok := env[k]
				if tok == "" {
					continue
				}
				for name, b := range map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()} {
					if bytes.Contains(b, []byte(tok)) {
						t.Errorf("%s appears on %s", k, name)
					}
				}
				for _, f := range files {
					if bytes.Contains(got[f.Name()], []byte(tok)) {
						t.Errorf("%s appears in %s", k, f.Name())
					}
				}
			}
			if stderr.Len() == 0 {
				t.Error("nothing was logged")
			}
			checkGoldenDir(t, filepath.Join(dir, "want"), got)
		})
	}
}

// checkGoldenDir compares got (file name to content) with the files of
// dir, or rewrites dir with -update.
func checkGoldenDir(t *testing.T, dir string, got map[string][]byte) {
	t.Helper()
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range got {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading %s (run go test ./action -update to create it): %v", dir, err)
	}
	want := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		want[e.Name()] = b
	}
	names := map[string]bool{}
	for n := range want {
		names[n] = true
	}
	for n := range got {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		w, okW := want[n]
		g, okG := got[n]
		switch {
		case !okW:
			t.Errorf("%s: unexpected file %s:\n%s", dir, n, g)
		case !okG:
			t.Errorf("%s: missing file %s", dir, n)
		case !bytes.Equal(w, g):
			t.Errorf("%s/%s differs (-want +got):\n%s", dir, n, cmp.Diff(string(w), string(g)))
		}
	}
}
