package kptpkg

import "sigs.k8s.io/kustomize/kyaml/yaml"

// RenderStatus is what kpt (v1.0.0-beta.62 and later) records in the root
// Kptfile's status.renderStatus after a render: one entry per pipeline
// step that ran or failed to start, in the order they ran, and on failure
// a summary naming the failed steps. Field names, order and omission are
// kpt's (api/kptfile/v1 at v1.0.0-beta.67).
type RenderStatus struct {
	MutationSteps   []PipelineStepResult `yaml:"mutationSteps,omitempty" json:"mutationSteps,omitempty"`
	ValidationSteps []PipelineStepResult `yaml:"validationSteps,omitempty" json:"validationSteps,omitempty"`
	ErrorSummary    string               `yaml:"errorSummary,omitempty" json:"errorSummary,omitempty"`

	// FunctionFailed: the render stopped at a function that ran and
	// failed, which kpt reports as an error it has already printed.
	FunctionFailed bool `yaml:"-" json:"-"`
}

// PipelineStepResult is one step of a render: the function as the
// pipeline names it (image resolved as run), its exit code, what it
// reported, and why it could not run.
type PipelineStepResult struct {
	Name           string `yaml:"name,omitempty" json:"name,omitempty"`
	Image          string `yaml:"image,omitempty" json:"image,omitempty"`
	ExecPath       string `yaml:"exec,omitempty" json:"exec,omitempty"`
	ExecutionError string `yaml:"executionError,omitempty" json:"executionError,omitempty"`
	Stderr         string `yaml:"stderr,omitempty" json:"stderr,omitempty"`
	ExitCode       int    `yaml:"exitCode" json:"exitCode"`

	Results      []ResultItem `yaml:"results,omitempty" json:"results,omitempty"`
	ErrorResults []ResultItem `yaml:"errorResults,omitempty" json:"errorResults,omitempty"`
}

// ResultItem is one result a function reported, as kpt's fnresult/v1
// ResultItem (field values are strings there).
type ResultItem struct {
	Message     string                   `yaml:"message,omitempty" json:"message,omitempty"`
	Severity    string                   `yaml:"severity,omitempty" json:"severity,omitempty"`
	ResourceRef *yaml.ResourceIdentifier `yaml:"resourceRef,omitempty" json:"resourceRef,omitempty"`
	Field       *ResultField             `yaml:"field,omitempty" json:"field,omitempty"`
	File        *ResultFile              `yaml:"file,omitempty" json:"file,omitempty"`
	Tags        map[string]string        `yaml:"tags,omitempty" json:"tags,omitempty"`
}

// ResultField is the field a result is about.
type ResultField struct {
	Path          string `yaml:"path,omitempty" json:"path,omitempty"`
	CurrentValue  string `yaml:"currentValue,omitempty" json:"currentValue,omitempty"`
	ProposedValue string `yaml:"proposedValue,omitempty" json:"proposedValue,omitempty"`
}

// ResultFile is the file holding the resource a result is about.
type ResultFile struct {
	Path  string `yaml:"path,omitempty" json:"path,omitempty"`
	Index int    `yaml:"index,omitempty" json:"index,omitempty"`
}

// StepName names the step as kpt's error summary does: its name, else
// its image, else its exec path.
func (s PipelineStepResult) StepName() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Image != "":
		return s.Image
	}
	return s.ExecPath
}
