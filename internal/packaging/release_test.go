package packaging

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// TestReleaseAssets builds one platform's release asset with
// scripts/release.sh and checks it is what scripts/action-install.sh
// downloads: kptbot_<version>_<os>_<arch>.tar.gz with the binary at its
// root, listed in checksums.txt, reporting the release's version.
func TestReleaseAssets(t *testing.T) {
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("sha256sum not installed")
	}
	dist := t.TempDir()
	cmd := exec.Command("../../scripts/release.sh", "v0.0.0-test")
	cmd.Env = append(os.Environ(), "PLATFORMS=linux/amd64", "DIST="+dist)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	name := "kptbot_0.0.0-test_linux_amd64.tar.gz"
	data, err := os.ReadFile(filepath.Join(dist, name))
	if err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := hex.EncodeToString(sum[:]) + "  " + name; !strings.Contains(string(sums), want) {
		t.Errorf("checksums.txt = %q, want a line %q (the installer greps for it)", sums, want)
	}
	zr, err := gzip.NewReader(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	bin := filepath.Join(t.TempDir(), "kptbot")
	found := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "kptbot" {
			found = true
			f, _ := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
			io.Copy(f, tr)
			f.Close()
		}
	}
	if !found {
		t.Fatalf("%s has no kptbot at its root (the installer extracts exactly that)", name)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "v0.0.0-test") {
		t.Errorf("the released binary says %q, %v; want version v0.0.0-test", out, err)
	}
}

// TestReleaseWorkflow checks the release workflow runs on version tags,
// builds with scripts/release.sh and pushes the Dockerfile's two images.
func TestReleaseWorkflow(t *testing.T) {
	raw, err := os.ReadFile("../../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		// "on" is YAML 1.1's boolean true, which is how sigs.k8s.io/yaml
		// reads the key; GitHub reads it as the string.
		On struct {
			Push struct{ Tags []string } `json:"push"`
		} `json:"true"`
		Jobs map[string]struct {
			Steps []struct {
				Run  string         `json:"run"`
				Uses string         `json:"uses"`
				With map[string]any `json:"with"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := sigsyaml.Unmarshal(raw, &wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	if len(wf.On.Push.Tags) == 0 || !strings.HasPrefix(wf.On.Push.Tags[0], "v") {
		t.Errorf("release.yml triggers on tags %v, want v*", wf.On.Push.Tags)
	}
	docker, _ := os.ReadFile("../../Dockerfile")
	var builds, targets []string
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			if strings.Contains(s.Run, "scripts/release.sh") {
				builds = append(builds, s.Run)
			}
			if tgt, ok := s.With["target"].(string); ok {
				targets = append(targets, tgt)
				if !strings.Contains(string(docker), " AS "+tgt) {
					t.Errorf("release.yml builds target %q, which the Dockerfile does not have", tgt)
				}
			}
		}
	}
	if len(builds) != 1 || len(targets) != 2 {
		t.Errorf("release.yml: builds %v, image targets %v; want scripts/release.sh once and the server and ci images", builds, targets)
	}
}
