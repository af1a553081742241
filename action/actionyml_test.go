package action

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/config"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// actionYAML is the part of action.yml's schema the tests check.
type actionYAML struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Author      string            `yaml:"author"`
	Branding    map[string]string `yaml:"branding"`
	Inputs      map[string]struct {
		Description string  `yaml:"description"`
		Required    bool    `yaml:"required"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			Name  string            `yaml:"name"`
			ID    string            `yaml:"id"`
			If    string            `yaml:"if"`
			Uses  string            `yaml:"uses"`
			With  map[string]string `yaml:"with"`
			Shell string            `yaml:"shell"`
			Run   string            `yaml:"run"`
			Env   map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func readActionYAML(t *testing.T) actionYAML {
	t.Helper()
	b, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a actionYAML
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// TestActionYAML checks action.yml against the code: the same inputs and
// outputs, every input passed to and read by `kptbot action`, every output
// written by it and mapped from the step that runs it.
func TestActionYAML(t *testing.T) {
	t.Parallel()
	a := readActionYAML(t)
	if a.Name == "" || a.Description == "" {
		t.Error("action.yml needs a name and a description (the Marketplace requires both)")
	}
	if got, want := keys(a.Inputs), sorted(InputNames()); !slices.Equal(got, want) {
		t.Fatalf("action.yml inputs %v, the code reads %v", got, want)
	}
	if got, want := keys(a.Outputs), sorted(OutputNames()); !slices.Equal(got, want) {
		t.Fatalf("action.yml outputs %v, the code writes %v", got, want)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using = %q, want composite (see the comment at the top of action.yml)", a.Runs.Using)
	}
	for name, in := range a.Inputs {
		if in.Description == "" || in.Default == nil || in.Required {
			t.Errorf("input %s: want a description, a default and required: false", name)
		}
	}
	if d := a.Inputs[InputToken].Default; d == nil || *d != "${{ github.token }}" {
		t.Errorf("input token: default %v, want ${{ github.token }}", d)
	}

	// The step that runs kptbot passes every input under its INPUT_ name.
	runStep := -1
	for i, s := range a.Runs.Steps {
		if strings.Contains(s.Run, " action") {
			runStep = i
		}
		if s.Run != "" && s.Shell == "" {
			t.Errorf("step %d: composite run steps need a shell", i)
		}
	}
	if runStep < 0 {
		t.Fatal("no step runs `kptbot action`")
	}
	step := a.Runs.Steps[runStep]
	if step.Shell != "bash" {
		t.Errorf("step %s runs in %q: want bash, which passes INPUT_DRY-RUN and INPUT_LOG-LEVEL on (dash drops hyphenated names)", step.ID, step.Shell)
	}
	for _, name := range InputNames() {
		if got, want := step.Env[GitHubInputEnv(name)], "${{ inputs."+name+" }}"; got != want {
			t.Errorf("step %s: env %s = %q, want %q", step.ID, GitHubInputEnv(name), got, want)
		}
	}
	for k := range step.Env {
		if strings.HasPrefix(k, "INPUT_") && !slices.ContainsFunc(InputNames(), func(n string) bool { return GitHubInputEnv(n) == k }) {
			t.Errorf("step %s passes %s, which is no input", step.ID, k)
		}
	}
	for name, out := range a.Outputs {
		if want := "${{ steps." + step.ID + ".outputs." + name + " }}"; out.Value != want {
			t.Errorf("output %s: value %q, want %q", name, out.Value, want)
		}
	}

	// The install step's script exists and is executable.
	for _, s := range a.Runs.Steps[:runStep] {
		for _, m := range regexp.MustCompile(`\$ACTION_PATH/(\S+?)"`).FindAllStringSubmatch(s.Run, -1) {
			fi, err := os.Stat("../" + m[1])
			if err != nil || fi.Mode()&0o111 == 0 {
				t.Errorf("step %s runs %s: %v (mode %v)", s.ID, m[1], err, fi)
			}
		}
	}

	// At a ref that is not a release the action builds from source: it
	// sets Go up itself, the version go.mod names, after the step that
	// decides (scripts/action-install.sh --plan) and before the install.
	plan, setupGo, install := -1, -1, -1
	for i, s := range a.Runs.Steps {
		switch {
		case strings.Contains(s.Run, "action-install.sh\" --plan"):
			plan = i
		case strings.HasPrefix(s.Uses, "actions/setup-go@"):
			setupGo = i
		case strings.Contains(s.Run, "action-install.sh"):
			install = i
		}
	}
	if plan < 0 || setupGo < 0 || install < 0 || !(plan < setupGo && setupGo < install && install < runStep) {
		t.Fatalf("steps: plan %d, setup-go %d, install %d, run %d: want them in that order", plan, setupGo, install, runStep)
	}
	sg := a.Runs.Steps[setupGo]
	if want := "steps." + a.Runs.Steps[plan].ID + ".outputs.source == 'true'"; sg.If != want {
		t.Errorf("setup-go runs if %q, want %q (only for a source build)", sg.If, want)
	}
	if sg.With["go-version-file"] != "${{ github.action_path }}/go.mod" {
		t.Errorf("setup-go with %v: want go-version-file ${{ github.action_path }}/go.mod (the action's own go.mod, not the caller's)", sg.With)
	}

	// The code reads every input from those variables, defaults included.
	seen := map[string]bool{}
	env := map[string]string{}
	for name, in := range a.Inputs {
		env[GitHubInputEnv(name)] = *in.Default
	}
	env[GitHubInputEnv(InputToken)] = "t0ken"
	got, err := readInputs(func(k string) string { seen[k] = true; return env[k] }, "GITHUB_TOKEN")
	if err != nil {
		t.Fatalf("the defaults in action.yml are refused: %v", err)
	}
	for _, name := range InputNames() {
		if !seen[GitHubInputEnv(name)] {
			t.Errorf("input %s: %s is never read", name, GitHubInputEnv(name))
		}
	}
	if got.Token != "t0ken" || got.Mode != ModeDefault || got.DryRun || got.WriteMode != config.WriteStandard {
		t.Errorf("defaults read as %+v", got)
	}
	set := map[string]string{"INPUT_TOKEN": "x", "INPUT_CONFIG": "c.yaml", "INPUT_MODE": "reconcile", "INPUT_DRY-RUN": "true", "INPUT_LOG-LEVEL": "debug",
		"INPUT_BOT-LOGIN": "acme-kptbot[bot]", "INPUT_FAN-OUT": "dispatch", "INPUT_WRITE-MODE": "single"}
	got, err = readInputs(func(k string) string { return set[k] }, "")
	if err != nil || got.Config != "c.yaml" || got.Mode != ModeReconcile || !got.DryRun || got.LogLevel.String() != "DEBUG" ||
		got.BotLogin != "acme-kptbot[bot]" || got.FanOut != FanOutDispatch || got.WriteMode != config.WriteSingle {
		t.Errorf("inputs set to non-defaults read as %+v, %v", got, err)
	}

	// The code writes every output.
	b, err := Outputs(bot.Outcome{Tags: []bot.TagRef{{Name: "p/v1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if written := keys(parseOutputs(t, string(b))); !slices.Equal(written, keys(a.Outputs)) {
		t.Errorf("the code writes outputs %v, action.yml declares %v", written, keys(a.Outputs))
	}
}

// TestDocsDocumentInputs checks that the GitHub Action section of
// docs/ci.md has a table row for every input, with its default.
func TestDocsDocumentInputs(t *testing.T) {
	t.Parallel()
	a := readActionYAML(t)
	b, err := os.ReadFile("../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "\n## GitHub Action")
	if start < 0 {
		t.Fatal(`docs/ci.md has no "## GitHub Action" section`)
	}
	section := readme[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	rows := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		if m := regexp.MustCompile("^\\| `([a-z-]+)` \\|").FindStringSubmatch(line); m != nil {
			rows[m[1]] = line
		}
	}
	for name, in := range a.Inputs {
		row, ok := rows[name]
		if !ok {
			t.Errorf("docs/ci.md: no table row for input %s", name)
			continue
		}
		want := "`" + *in.Default + "`"
		if *in.Default == "" {
			want = "(empty)"
		}
		if !strings.Contains(row, want) {
			t.Errorf("docs/ci.md: the row of input %s does not give its default %s:\n%s", name, want, row)
		}
	}
	for _, name := range OutputNames() {
		if !strings.Contains(section, "`"+name+"`") {
			t.Errorf("docs/ci.md: output %s is not documented", name)
		}
	}
	for name := range rows {
		if _, ok := a.Inputs[name]; !ok && !slices.Contains(OutputNames(), name) {
			t.Errorf("docs/ci.md documents %s, which action.yml does not declare", name)
		}
	}
}
