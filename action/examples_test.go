package action

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// workflow is the part of a GitHub Actions workflow the tests check.
type workflow struct {
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		Steps []struct {
			ID   string            `yaml:"id"`
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
			Run  string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestGitHubExamples parses every example workflow and checks that its
// kptbot steps pass only inputs action.yml declares and read only outputs
// it declares, and that upstream and downstream agree on the dispatch.
func TestGitHubExamples(t *testing.T) {
	t.Parallel()
	a := readActionYAML(t)
	files, err := filepath.Glob("../examples/github/*.yml")
	if err != nil || len(files) < 2 {
		t.Fatalf("examples/github: %v %v", files, err)
	}
	dispatchTypes := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var w workflow
		if err := yaml.Unmarshal(b, &w); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(w.On) == 0 || len(w.Jobs) == 0 {
			t.Fatalf("%s: no triggers or no jobs", f)
		}
		kptbotSteps := map[string]bool{}
		for job, j := range w.Jobs {
			for i, s := range j.Steps {
				if !strings.HasPrefix(s.Uses, "kptbot/kptbot@") && s.Uses != "./" {
					continue
				}
				if !regexp.MustCompile(`@v\d+\.\d+\.\d+$`).MatchString(s.Uses) {
					t.Errorf("%s: job %s step %d uses %s: pin a release tag (the fast path of scripts/action-install.sh)", f, job, i, s.Uses)
				}
				kptbotSteps[s.ID] = true
				for k := range s.With {
					if _, ok := a.Inputs[k]; !ok {
						t.Errorf("%s: job %s step %d passes input %q, which action.yml does not declare", f, job, i, k)
					}
				}
			}
		}
		if len(kptbotSteps) == 0 {
			t.Errorf("%s: no step uses kptbot/kptbot", f)
		}
		for _, m := range regexp.MustCompile(`steps\.([\w-]+)\.outputs\.([\w-]+)`).FindAllStringSubmatch(string(b), -1) {
			if _, ok := a.Outputs[m[2]]; kptbotSteps[m[1]] && !ok {
				t.Errorf("%s: reads output %q of the kptbot step, which action.yml does not declare", f, m[2])
			}
		}
		if rd, ok := w.On["repository_dispatch"].(map[string]any); ok {
			for _, ty := range rd["types"].([]any) {
				dispatchTypes[filepath.Base(f)] = append(dispatchTypes[filepath.Base(f)], ty.(string))
			}
		}
		if strings.Contains(string(b), "/dispatches") && !strings.Contains(string(b), DispatchEventType) {
			t.Errorf("%s: dispatches an event type other than %s", f, DispatchEventType)
		}
	}
	if !slices.Contains(dispatchTypes["downstream.yml"], DispatchEventType) {
		t.Errorf("downstream.yml does not run on repository_dispatch %s: %v", DispatchEventType, dispatchTypes)
	}
}

// TestGitLabTemplate parses the GitLab CI template (spec header and jobs)
// and checks that the inputs it interpolates are declared, that the
// variables it sets are ones `kptbot action` reads, and that its artifact
// paths are the files the code writes by default.
func TestGitLabTemplate(t *testing.T) {
	t.Parallel()
	a := readActionYAML(t)
	b, err := os.ReadFile("../examples/gitlab/kptbot.gitlab-ci.yml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	var header struct {
		Spec struct {
			Inputs map[string]map[string]any `yaml:"inputs"`
		} `yaml:"spec"`
	}
	if err := dec.Decode(&header); err != nil {
		t.Fatalf("spec header: %v", err)
	}
	type job struct {
		Variables map[string]string `yaml:"variables"`
		Script    []string          `yaml:"script"`
		Artifacts struct {
			Paths   []string          `yaml:"paths"`
			Reports map[string]string `yaml:"reports"`
		} `yaml:"artifacts"`
	}
	var jobs map[string]job
	if err := dec.Decode(&jobs); err != nil {
		t.Fatalf("jobs: %v", err)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("more than two YAML documents: %v", err)
	}
	// Template inputs are the action's, plus GitLab's own job settings.
	gitlabOnly := []string{"stage", "image"}
	for name := range header.Spec.Inputs {
		if _, ok := a.Inputs[name]; !ok && !slices.Contains(gitlabOnly, name) {
			t.Errorf("template input %q is neither an action input nor one of %v", name, gitlabOnly)
		}
	}
	for _, m := range regexp.MustCompile(`\$\[\[\s*inputs\.([\w-]+)\s*\]\]`).FindAllStringSubmatch(string(b), -1) {
		if _, ok := header.Spec.Inputs[m[1]]; !ok {
			t.Errorf("the template uses inputs.%s, which its spec does not declare", m[1])
		}
	}
	kj, ok := jobs["kptbot"]
	if !ok || !slices.Contains(kj.Script, "kptbot action") {
		t.Fatalf("no kptbot job running `kptbot action`: %+v", jobs)
	}
	known := []string{EnvEvent, EnvPayload, EnvDotenv, EnvReport, EnvCodeQuality}
	for _, n := range InputNames() {
		known = append(known, VariableEnv(n))
	}
	for k, v := range kj.Variables {
		if strings.HasPrefix(k, "KPTBOT_") && !slices.Contains(known, k) {
			t.Errorf("the kptbot job sets %s, which kptbot does not read", k)
		}
		if m := regexp.MustCompile(`^\$\[\[ inputs\.([\w-]+) \]\]$`).FindStringSubmatch(v); m != nil && k != VariableEnv(m[1]) {
			t.Errorf("the kptbot job sets %s from input %s: want %s", k, m[1], VariableEnv(m[1]))
		}
	}
	for name := range header.Spec.Inputs {
		if _, ok := a.Inputs[name]; ok && kj.Variables[VariableEnv(name)] == "" {
			t.Errorf("template input %s is never passed to kptbot (%s)", name, VariableEnv(name))
		}
	}
	env, err := Detect(lookup(gitlabEnv(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if got := kj.Artifacts.Reports["dotenv"]; got != env.DotenvFile {
		t.Errorf("dotenv report %q, kptbot writes %q", got, env.DotenvFile)
	}
	if got := kj.Artifacts.Reports["codequality"]; got != env.CodeQualityFile {
		t.Errorf("codequality report %q, kptbot writes %q", got, env.CodeQualityFile)
	}
	if !slices.Contains(kj.Artifacts.Paths, env.ReportFile) {
		t.Errorf("artifact paths %v miss %s", kj.Artifacts.Paths, env.ReportFile)
	}
	if !strings.Contains(string(b), "KPTBOT_EVENT]="+DispatchEventType) {
		t.Errorf("the fan-out does not send KPTBOT_EVENT=%s", DispatchEventType)
	}
}
