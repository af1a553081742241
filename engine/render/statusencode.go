package render

import (
	"bytes"
	"crypto/rand"
	"fmt"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// resultsBatch bounds the results encoded in one YAML document: yaml.v3's
// emitter keeps a document's every event until it ends (~20 per result):
// ~65 MB for the 10k-resource package's ~16,000 results in one document.
const resultsBatch = 256

// marshalKptfile is yaml.MarshalWithOptions (wide sequences) of kf, byte
// for byte: a long result list is written as a placeholder, replaced by
// the list encoded in batches as top-level sequences, non-empty lines
// indented as the placeholder (width is unbounded; blank lines in block
// scalars carry no indent).
func marshalKptfile(kf kptfileWithStatus) ([]byte, error) {
	opts := &yaml.EncoderOptions{SeqIndent: yaml.WideSequenceStyle}
	if kf.Status == nil || kf.Status.RenderStatus == nil {
		return yaml.MarshalWithOptions(kf, opts)
	}
	var nonce [8]byte // drawn for the first long list only (a fresh process's first draw costs)
	type held struct {
		token string
		items []kptpkg.ResultItem
	}
	var lists []held
	hold := func(steps []kptpkg.PipelineStepResult) []kptpkg.PipelineStepResult {
		steps = append([]kptpkg.PipelineStepResult(nil), steps...)
		for i := range steps {
			for _, list := range []*[]kptpkg.ResultItem{&steps[i].Results, &steps[i].ErrorResults} {
				if len(*list) <= resultsBatch {
					continue
				}
				if len(lists) == 0 {
					_, _ = rand.Read(nonce[:]) // never fails (crypto/rand since Go 1.24)
				}
				token := fmt.Sprintf("kptbot-results-%x-%d", nonce, len(lists))
				lists = append(lists, held{token, *list})
				*list = []kptpkg.ResultItem{{Message: token}}
			}
		}
		return steps
	}
	rs := *kf.Status.RenderStatus
	rs.MutationSteps, rs.ValidationSteps = hold(rs.MutationSteps), hold(rs.ValidationSteps)
	kf.Status = &kptfileStatus{Conditions: kf.Status.Conditions, RenderStatus: &rs}
	b, err := yaml.MarshalWithOptions(kf, opts)
	if err != nil {
		return nil, err
	}
	for _, l := range lists {
		line := []byte("- message: " + l.token + "\n")
		at := bytes.Index(b, line)
		start := bytes.LastIndexByte(b[:at+1], '\n') + 1
		if at < 0 || bytes.Count(b, []byte(l.token)) != 1 || len(bytes.TrimLeft(b[start:at], " ")) != 0 {
			return nil, fmt.Errorf("results placeholder %s not found once on its own line", l.token)
		}
		indent := b[start:at]
		var out bytes.Buffer
		out.Grow(len(b))
		out.Write(b[:start])
		for i := 0; i < len(l.items); i += resultsBatch {
			part, err := yaml.MarshalWithOptions(l.items[i:min(i+resultsBatch, len(l.items))], opts)
			if err != nil {
				return nil, err
			}
			for len(part) > 0 {
				n := bytes.IndexByte(part, '\n') + 1
				if n == 0 {
					n = len(part)
				}
				if n > 1 {
					out.Write(indent)
				}
				out.Write(part[:n])
				part = part[n:]
			}
		}
		out.Write(b[at+len(line):])
		b = out.Bytes()
	}
	return b, nil
}
