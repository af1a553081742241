package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/kptbot/kptbot/engine/fnresults"
	"github.com/kptbot/kptbot/engine/kptpkg"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestMarshalKptfileMatchesWholeEncode holds the batched render-status
// writer to the bytes of encoding the Kptfile in one go, on result lists
// long enough to be batched and messages whose layout depends on
// indentation (block scalars with blank lines and leading spaces, quoted,
// long and non-ASCII strings).
func TestMarshalKptfileMatchesWholeEncode(t *testing.T) {
	messages := []string{
		"set annotations: {\"owner\":\"team-a@example.com\"}",
		"line one\n\n  indented after a blank line\nlast\n",
		"  leading spaces\nand a second line",
		"- looks like a sequence",
		"key: value",
		"",
		strings.Repeat("a long message without breaks ", 20),
		"ünïcödé ✓",
		"trailing blank lines\n\n\n",
		"'quoted' \"double\" #hash",
	}
	item := func(i int) kptpkg.ResultItem {
		r := kptpkg.ResultItem{Message: messages[i%len(messages)]}
		switch i % 4 {
		case 0:
			r.Field = &kptpkg.ResultField{Path: "metadata.annotations"}
			r.File = &kptpkg.ResultFile{Path: fmt.Sprintf("resources-%04d.yaml", i), Index: i % 3}
		case 1:
			r.Severity = string(fnresults.Warning)
			r.ResourceRef = &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, NameMeta: yaml.NameMeta{Name: fmt.Sprint("cm-", i), Namespace: "ns"}}
		case 2:
			r.Tags = map[string]string{"b": "2", "a": "multi\nline"}
		}
		return r
	}
	items := func(n int) []kptpkg.ResultItem {
		out := make([]kptpkg.ResultItem, n)
		for i := range out {
			out[i] = item(i)
		}
		return out
	}
	for _, n := range []int{0, 1, resultsBatch, resultsBatch + 1, 3*resultsBatch + 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			kf := kptfileWithStatus{
				ResourceMeta: yaml.ResourceMeta{TypeMeta: yaml.TypeMeta{APIVersion: "kpt.dev/v1", Kind: "Kptfile"}, ObjectMeta: yaml.ObjectMeta{NameMeta: yaml.NameMeta{Name: "pkg"}}},
				Status: &kptfileStatus{
					Conditions: []kptfilev1.Condition{{Type: ConditionRendered, Status: kptfilev1.ConditionTrue, Reason: ReasonSuccess}},
					RenderStatus: &kptpkg.RenderStatus{
						MutationSteps: []kptpkg.PipelineStepResult{
							{Image: "set-annotations", Results: items(n)},
							{Image: "empty"},
							{Image: "both", Results: items(n + 3), ErrorResults: items(n)},
						},
						ValidationSteps: []kptpkg.PipelineStepResult{{Image: "kubeconform", ErrorResults: items(n + 1)}},
						ErrorSummary:    "summary",
					},
				},
			}
			want, err := yaml.MarshalWithOptions(kf, &yaml.EncoderOptions{SeqIndent: yaml.WideSequenceStyle})
			if err != nil {
				t.Fatal(err)
			}
			got, err := marshalKptfile(kf)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("batched encoding differs (%d bytes, want %d):\n%s", len(got), len(want), firstDifference(got, want))
			}
		})
	}
}

// firstDifference shows where got and want part.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-200)
	return fmt.Sprintf("got:\n%s\nwant:\n%s", got[from:min(len(got), i+200)], want[from:min(len(want), i+200)])
}
