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

// TestGitHubExamples parses every example workflow and checks that it runs
// as written: its kptbot steps use a ref that installs (a release tag, or
// main, which action.yml builds with the Go it sets up), pass only inputs
// action.yml declares and read only outputs it declares; a step given an
// App token says which account that is (bot-login, from the same token
// step's app-slug), since the bot trusts only its own comments; and
// upstream and downstream agree on the dispatch, which the bot sends itself
// to the followers it finds (fan-out: dispatch), never to a hand-kept list.
func TestGitHubExamples(t *testing.T) {
	t.Parallel()
	a := readActionYAML(t)
	files, err := filepath.Glob("../examples/github/*.yml")
	if err != nil || len(files) < 2 {
		t.Fatalf("examples/github: %v %v", files, err)
	}
	dispatchTypes := map[string][]string{}
	fanOut := map[string]string{}
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
			tokenSteps := map[string]bool{}
			for i, s := range j.Steps {
				if strings.HasPrefix(s.Uses, "actions/create-github-app-token@") {
					tokenSteps[s.ID] = true
				}
				if !strings.HasPrefix(s.Uses, "kptbot/kptbot@") && s.Uses != "./" {
					continue
				}
				if !exampleRef.MatchString(s.Uses) {
					t.Errorf("%s: job %s step %d uses %s: use @main (built from source) or a release tag @vX.Y.Z", f, job, i, s.Uses)
				}
				kptbotSteps[s.ID] = true
				for k := range s.With {
					if _, ok := a.Inputs[k]; !ok {
						t.Errorf("%s: job %s step %d passes input %q, which action.yml does not declare", f, job, i, k)
					}
				}
				if m := regexp.MustCompile(`^\$\{\{ steps\.([\w-]+)\.outputs\.token \}\}$`).FindStringSubmatch(s.With[InputToken]); m != nil {
					if !tokenSteps[m[1]] {
						t.Errorf("%s: job %s step %d takes its token from step %s, which is not an earlier actions/create-github-app-token step", f, job, i, m[1])
					}
					if want := "${{ steps." + m[1] + ".outputs.app-slug }}[bot]"; s.With[InputBotLogin] != want {
						t.Errorf("%s: job %s step %d uses an App token with bot-login %q: want %q (the bot trusts only its own comments)", f, job, i, s.With[InputBotLogin], want)
					}
				}
				fanOut[filepath.Base(f)] = s.With[InputFanOut]
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
		if strings.Contains(string(b), "/dispatches") {
			t.Errorf("%s: dispatches by hand: the bot finds the followers and dispatches itself (fan-out: dispatch)", f)
		}
	}
	if !slices.Contains(dispatchTypes["downstream.yml"], DispatchEventType) {
		t.Errorf("downstream.yml does not run on repository_dispatch %s: %v", DispatchEventType, dispatchTypes)
	}
	if fanOut["upstream.yml"] != FanOutDispatch {
		t.Errorf("upstream.yml: fan-out %q: want %q, which sends downstream.yml its repository_dispatch", fanOut["upstream.yml"], FanOutDispatch)
	}
}

// exampleRef is what an example may pin kptbot/kptbot at: a release tag
// (the release binary) or main (built from source).
var exampleRef = regexp.MustCompile(`@(v\d+\.\d+\.\d+|main)$`)

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
	gitlabOnly := []string{"stage", "image", "version"}
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
	if _, ok := header.Spec.Inputs[InputFanOut]; !ok {
		t.Errorf("the template has no %s input: a publish could not tell the following projects", InputFanOut)
	}
	if strings.Contains(string(b), "KPTBOT_DOWNSTREAMS") {
		t.Error("the template fans out to a hand-kept list: the bot finds the followers itself (fan-out: dispatch)")
	}
}
