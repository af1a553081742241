package action

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestInstallScript runs scripts/action-install.sh (the action's install
// step) against a fake release server: the release binary is downloaded,
// checked against checksums.txt, cached, and reported as the step's bin
// output; a tampered download is refused.
func TestInstallScript(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the test release is built for linux")
	}
	for _, tool := range []string{"bash", "curl", "tar", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	const ref = "v9.8.7"
	tarball := fmt.Sprintf("kptbot_9.8.7_linux_%s.tar.gz", runtime.GOARCH)
	fake := []byte("#!/bin/sh\necho \"kptbot v9.8.7 (fake release)\"\n")
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: "kptbot", Mode: 0o755, Size: int64(len(fake))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(fake)
	tw.Close()
	gz.Close()
	sum := sha256.Sum256(tgz.Bytes())
	good := hex.EncodeToString(sum[:]) + "  " + tarball + "\n"

	run := func(t *testing.T, checksums string) (string, string, *atomic.Int32, error) {
		var downloads atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/kptbot/kptbot/releases/download/" + ref + "/" + tarball:
				downloads.Add(1)
				w.Write(tgz.Bytes())
			case "/kptbot/kptbot/releases/download/" + ref + "/checksums.txt":
				fmt.Fprint(w, "0000  kptbot_9.8.7_darwin_arm64.tar.gz\n"+checksums)
			default:
				http.NotFound(w, r)
			}
		}))
		t.Cleanup(srv.Close)
		dir := t.TempDir()
		out := filepath.Join(dir, "output")
		cache := filepath.Join(dir, "toolcache")
		var stdout bytes.Buffer
		var err error
		for i := 0; i < 2 && err == nil; i++ { // the second run finds the cache
			cmd := exec.Command("bash", "../scripts/action-install.sh")
			cmd.Env = append(os.Environ(), "ACTION_REF="+ref, "ACTION_PATH=..", "RUNNER_TEMP="+dir,
				"RUNNER_TOOL_CACHE="+cache, "GITHUB_SERVER_URL="+srv.URL, "GITHUB_OUTPUT="+out)
			cmd.Stdout, cmd.Stderr = &stdout, &stdout
			err = cmd.Run()
		}
		b, _ := os.ReadFile(out)
		return string(b), stdout.String(), &downloads, err
	}

	t.Run("release", func(t *testing.T) {
		t.Parallel()
		outputs, log, downloads, err := run(t, good)
		if err != nil {
			t.Fatalf("install: %v\n%s", err, log)
		}
		lines := strings.Split(strings.TrimSpace(outputs), "\n")
		if len(lines) != 2 || lines[0] != lines[1] || !strings.HasPrefix(lines[0], "bin=") ||
			!strings.HasSuffix(lines[0], "/kptbot/9.8.7/"+runtime.GOARCH+"/kptbot") {
			t.Fatalf("GITHUB_OUTPUT:\n%s", outputs)
		}
		if !strings.Contains(log, "kptbot v9.8.7 (fake release)") {
			t.Errorf("the installed binary was not run:\n%s", log)
		}
		if n := downloads.Load(); n != 1 {
			t.Errorf("%d downloads for two installs: the tool cache is not used", n)
		}
	})
	t.Run("tampered", func(t *testing.T) {
		t.Parallel()
		_, log, _, err := run(t, strings.Repeat("ab", 32)+"  "+tarball+"\n")
		if err == nil || !strings.Contains(log, "::error title=kptbot::"+tarball+" does not match the release's checksums.txt") {
			t.Fatalf("a tampered download was accepted: %v\n%s", err, log)
		}
	})
}

// TestInstallPlan runs the action's first step (action-install.sh --plan),
// whose output decides whether action.yml sets up Go: only a release tag
// skips the source build.
func TestInstallPlan(t *testing.T) {
	t.Parallel()
	for ref, want := range map[string]string{"v1.2.3": "false", "v1.2.3-rc.1": "false", "main": "true", "v1": "true", "": "true", "0123abc": "true"} {
		out := filepath.Join(t.TempDir(), "output")
		cmd := exec.Command("bash", "../scripts/action-install.sh", "--plan")
		cmd.Env = append(os.Environ(), "ACTION_REF="+ref, "ACTION_PATH=..", "RUNNER_TEMP="+t.TempDir(), "GITHUB_OUTPUT="+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ref %q: %v\n%s", ref, err, b)
		}
		if b, _ := os.ReadFile(out); string(b) != "source="+want+"\n" {
			t.Errorf("ref %q: GITHUB_OUTPUT %q, want source=%s", ref, b, want)
		}
	}
}

// TestInstallFromSource runs the install step as the action runs it at a
// ref that is not a release (uses: kptbot/kptbot@main): it builds kptbot
// from the action's own source with the Go on PATH (action.yml's setup-go
// step) and reports the binary, which runs.
func TestInstallFromSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kptbot")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not on PATH")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	cmd := exec.Command("bash", "../scripts/action-install.sh")
	cmd.Env = append(os.Environ(), "ACTION_REF=main", "ACTION_PATH=..", "RUNNER_TEMP="+dir, "GITHUB_OUTPUT="+out)
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install from source: %v\n%s", err, log)
	}
	b, _ := os.ReadFile(out)
	bin, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "bin=")
	if !ok {
		t.Fatalf("GITHUB_OUTPUT %q: want bin=PATH", b)
	}
	v, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(v), "main") {
		t.Errorf("%s version: %q, %v; want the ref as its version", bin, v, err)
	}
	if !strings.Contains(string(log), string(v)) {
		t.Errorf("the install step does not show the version it installed:\n%s", log)
	}
}

// TestGitLabTemplateInstall runs the GitLab template's script lines in sh,
// as a runner would in the golang image: kptbot is not installed, so the
// job builds it with `go install` at the version input (a stand-in go here
// records the call and installs a stand-in kptbot), then runs kptbot action
// from GOPATH/bin. With kptbot already in the image nothing is built.
func TestGitLabTemplateInstall(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	b, err := os.ReadFile("../examples/gitlab/kptbot.gitlab-ci.yml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	var header any
	if err := dec.Decode(&header); err != nil {
		t.Fatal(err)
	}
	var jobs map[string]struct {
		Script []string `yaml:"script"`
	}
	if err := dec.Decode(&jobs); err != nil {
		t.Fatal(err)
	}
	script := strings.Join(jobs["kptbot"].Script, "\n")
	script = strings.ReplaceAll(script, "$[[ inputs.version ]]", "v9.9.9")
	if strings.Contains(script, "$[[") {
		t.Fatalf("the script uses an input this test does not fill:\n%s", script)
	}
	run := func(t *testing.T, preinstalled bool) string {
		dir := t.TempDir()
		bin, gopath := filepath.Join(dir, "bin"), filepath.Join(dir, "gopath")
		os.MkdirAll(bin, 0o755)
		os.MkdirAll(filepath.Join(gopath, "bin"), 0o755)
		calls := filepath.Join(dir, "calls")
		fakeKptbot := "#!/bin/sh\necho \"kptbot $* from $0\" >>" + calls + "\n"
		fakeGo := "#!/bin/sh\nif [ \"$1\" = env ]; then echo " + gopath + "; exit 0; fi\n" +
			"echo \"go $* GONOSUMDB=$GONOSUMDB CGO_ENABLED=$CGO_ENABLED\" >>" + calls + "\n" +
			"printf '%s' '" + fakeKptbot + "' >" + filepath.Join(gopath, "bin", "kptbot") + "\nchmod +x " + filepath.Join(gopath, "bin", "kptbot") + "\n"
		os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755)
		if preinstalled {
			os.WriteFile(filepath.Join(bin, "kptbot"), []byte(fakeKptbot), 0o755)
		}
		cmd := exec.Command("sh", "-e", "-c", script)
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("script: %v\n%s\n%s", err, out, script)
		}
		got, _ := os.ReadFile(calls)
		return string(got)
	}
	got := run(t, false)
	if !strings.Contains(got, "go install github.com/kptbot/kptbot/cmd/kptbot@v9.9.9 GONOSUMDB=github.com/kptdev CGO_ENABLED=0") ||
		!strings.Contains(got, "kptbot action from "+"") || !strings.Contains(got, "/gopath/bin/kptbot") {
		t.Errorf("without kptbot in the image: %s", got)
	}
	if got := run(t, true); strings.Contains(got, "go install") || !strings.Contains(got, "kptbot action from") {
		t.Errorf("with kptbot in the image: %s", got)
	}
}
