// Package fnresults is what functions report, as kpt records it: the
// FunctionResultList of `--results-dir` (kpt's api/fnresult/v1), one
// Result per function run, and each function's structured results (the
// items of kyaml's fn/framework). The types serialize field for field as
// kpt's and kyaml's do; they are kptbot's own so that the binary does not
// link kyaml's fn/framework, which brings kube-openapi's validators and
// their package initialization into every command.
package fnresults

import (
	"fmt"
	"strings"

	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Severity is how serious a result is.
type Severity string

// The severities functions report.
const (
	// Error fails the function.
	Error Severity = "error"
	// Warning is reported without failing it.
	Warning Severity = "warning"
	// Info is informative only; a result without a severity is read as it.
	Info Severity = "info"
)

// Item is one structured result of a function (kyaml's framework.Result).
type Item struct {
	Message     string                   `yaml:"message,omitempty" json:"message,omitempty"`
	Severity    Severity                 `yaml:"severity,omitempty" json:"severity,omitempty"`
	ResourceRef *yaml.ResourceIdentifier `yaml:"resourceRef,omitempty" json:"resourceRef,omitempty"`
	Field       *Field                   `yaml:"field,omitempty" json:"field,omitempty"`
	File        *File                    `yaml:"file,omitempty" json:"file,omitempty"`
	Tags        map[string]string        `yaml:"tags,omitempty" json:"tags,omitempty"`
}

// File is the file holding the resource a result is about: its path in
// the package and the resource's index in it.
type File struct {
	Path  string `yaml:"path,omitempty" json:"path,omitempty"`
	Index int    `yaml:"index,omitempty" json:"index,omitempty"`
}

// Field is the field a result is about, with its current value and the
// one the function proposes, as the function wrote them.
type Field struct {
	Path          string      `yaml:"path,omitempty" json:"path,omitempty"`
	CurrentValue  interface{} `yaml:"currentValue,omitempty" json:"currentValue,omitempty"`
	ProposedValue interface{} `yaml:"proposedValue,omitempty" json:"proposedValue,omitempty"`
}

// String is the result as kpt prints it in `fn eval`'s [Results] line
// (kyaml's framework.Result.String): "[severity] apiVersion/kind/namespace/name
// field.path: message", the missing parts left out, info when unset.
func (i Item) String() string {
	var b strings.Builder
	severity := i.Severity
	if severity == "" {
		severity = Info
	}
	fmt.Fprintf(&b, "[%s]", severity)
	if ref := i.ResourceRef; ref != nil {
		var id []string
		for _, s := range []string{ref.APIVersion, ref.Kind, ref.Namespace, ref.Name} {
			if s != "" {
				id = append(id, s)
			}
		}
		if len(id) > 0 {
			b.WriteString(" " + strings.Join(id, "/"))
		}
	}
	if i.Field != nil {
		b.WriteString(" " + i.Field.Path)
	}
	b.WriteString(": " + i.Message)
	return b.String()
}

// Result is kpt's record of one function run: the function (image or
// exec), its stderr and exit code, and its structured results.
type Result struct {
	Image    string  `yaml:"image,omitempty"`
	ExecPath string  `yaml:"exec,omitempty"`
	Stderr   string  `yaml:"stderr,omitempty"`
	ExitCode int     `yaml:"exitCode"`
	Results  []*Item `yaml:"results,omitempty"`
}

// The FunctionResultList's type, as kpt writes it.
const (
	ListAPIVersion = "kpt.dev/v1"
	ListKind       = "FunctionResultList"
)

// List is kpt's FunctionResultList: the command's exit code and every
// function run, in the order they ran.
type List struct {
	yaml.ResourceMeta `yaml:",inline"`
	ExitCode          int      `yaml:"exitCode"`
	Items             []Result `yaml:"items,omitempty"`
}

// NewList is an empty list named as kpt names it.
func NewList() *List {
	return &List{
		ResourceMeta: yaml.ResourceMeta{
			TypeMeta:   yaml.TypeMeta{APIVersion: ListAPIVersion, Kind: ListKind},
			ObjectMeta: yaml.ObjectMeta{NameMeta: yaml.NameMeta{Name: "fnresults"}},
		},
		Items: []Result{},
	}
}

// FromSDK is the Go SDK's results (what the built-ins report) as items;
// the two are field for field the same, nil results left out. No results
// are nil.
func FromSDK(rs sdk.Results) []*Item {
	if len(rs) == 0 {
		return nil
	}
	out := make([]*Item, 0, len(rs))
	for _, r := range rs {
		if r == nil {
			continue
		}
		it := &Item{Message: r.Message, Severity: Severity(r.Severity), Tags: r.Tags}
		if r.ResourceRef != nil {
			it.ResourceRef = &yaml.ResourceIdentifier{
				TypeMeta: yaml.TypeMeta{APIVersion: r.ResourceRef.APIVersion, Kind: r.ResourceRef.Kind},
				NameMeta: yaml.NameMeta{Name: r.ResourceRef.Name, Namespace: r.ResourceRef.Namespace},
			}
		}
		if r.Field != nil {
			it.Field = &Field{Path: r.Field.Path, CurrentValue: r.Field.CurrentValue, ProposedValue: r.Field.ProposedValue}
		}
		if r.File != nil {
			it.File = &File{Path: r.File.Path, Index: r.File.Index}
		}
		out = append(out, it)
	}
	return out
}
