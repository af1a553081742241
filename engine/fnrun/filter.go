package fnrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/fnresults"
)

// Outcome is what one run of a function reported, as kpt records it.
type Outcome struct {
	// Results are the function's structured results.
	Results []*fnresults.Item
	// Stderr is what the process wrote to stderr (the container engine's
	// own pull messages left out).
	Stderr string
	// ExitCode is the process's exit code: 1 when it failed without one
	// (it could not start, its output could not be read).
	ExitCode int
}

// Filter runs the process on input as kpt's FunctionRunner does, through
// kyaml's FunctionFilter inside a kio pipeline: the resources sent as a
// ResourceList with config as its functionConfig, the output read back
// with the input's comments and field order copied onto the resources it
// kept, generated resources given a default path, path and index
// annotations kept in step with their legacy forms. check runs on the
// output, whether or not the function failed, and its error comes first;
// then the structured results are read. The outcome is nil when there is
// no result for kpt to record (check or the results failed); otherwise
// the error is the function's (an *ExitError when it exited non-zero).
func (p *Process) Filter(ctx context.Context, config *yaml.RNode, input []*yaml.RNode, check func([]*yaml.RNode) error) ([]*yaml.RNode, *Outcome, error) {
	var recorded *Outcome
	do := func(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
		var out Outcome
		ff := &runtimeutil.FunctionFilter{FunctionConfig: config, GlobalScope: true,
			Run: func(r io.Reader, w io.Writer) error {
				stderr, err := p.Run(ctx, r, w)
				var exit *ExitError
				if err == nil || errors.As(err, &exit) {
					out.Stderr = stderr // kpt keeps stderr only from a process that ran
				}
				return err
			}}
		output, err := ff.Filter(nodes)
		if check != nil {
			if cerr := check(output); cerr != nil {
				return output, cerr
			}
		}
		results, rerr := StructuredResults(ff.Results)
		if rerr != nil {
			return output, rerr
		}
		out.Results = results
		if err != nil {
			out.ExitCode = 1
			var exit *ExitError
			if errors.As(err, &exit) {
				out.ExitCode = exit.ExitCode
			}
		}
		recorded = &out
		return output, err
	}
	pb := &kio.PackageBuffer{}
	err := kio.Pipeline{Inputs: []kio.Reader{&kio.PackageBuffer{Nodes: input}}, Filters: []kio.Filter{kio.FilterFunc(do)}, Outputs: []kio.Writer{pb}}.Execute()
	return pb.Nodes, recorded, err
}

// StructuredResults reads a function's results field as kpt does: the Go
// SDK's list of items or the older wrapped form ({items: [...]}), with the
// legacy resourceRef.metadata name and namespace and field.suggestedValue
// lifted into their current places.
func StructuredResults(n *yaml.RNode) ([]*fnresults.Item, error) {
	if n.IsNilOrEmpty() {
		return nil, nil
	}
	if n.YNode().Kind == yaml.MappingNode {
		if items := n.Field("items"); items != nil && !items.Value.IsNilOrEmpty() {
			n = items.Value
		}
	}
	s, err := n.String()
	if err != nil {
		return nil, err
	}
	var out []*fnresults.Item
	if err := yaml.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("function results: %w", err)
	}
	items, err := n.Elements()
	if err != nil {
		return nil, fmt.Errorf("function results: %w", err)
	}
	for i, item := range items {
		if i >= len(out) || out[i] == nil {
			continue
		}
		liftLegacy(item, out[i])
	}
	return out, nil
}

// liftLegacy is kpt's migrateLegacyResult for one item.
func liftLegacy(item *yaml.RNode, r *fnresults.Item) {
	if sv, err := item.Pipe(yaml.Lookup("field", "suggestedValue")); err == nil && sv != nil {
		if r.Field == nil {
			r.Field = &fnresults.Field{}
		}
		r.Field.ProposedValue = sv
	}
	meta, err := item.Pipe(yaml.Lookup("resourceRef", "metadata"))
	if err != nil || meta == nil || r.ResourceRef == nil {
		return
	}
	if name := meta.Field("name"); name != nil {
		r.ResourceRef.Name = strings.TrimSpace(name.Value.MustString())
	}
	if ns := meta.Field("namespace"); ns != nil {
		if v := strings.TrimSpace(ns.Value.MustString()); v != "" && v != "''" {
			r.ResourceRef.Namespace = v
		}
	}
}
