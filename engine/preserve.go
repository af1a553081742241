package engine

import (
	"bytes"
	"encoding/json"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// upstreamIdentifierAnnotation is kpt's bookkeeping twin of the kpt-merge
// comment; its presence alone is not a change worth rewriting a file for.
const upstreamIdentifierAnnotation = "internal.kpt.dev/upstream-identifier"

// preserveUntouched gives every file of after that means the same as in
// before its original bytes back. kpt's merge and render re-serialize every
// resource; this keeps comments, spacing and quoting of the files nothing
// really changed, so diffs and PRs show only real changes.
func preserveUntouched(before, after Tree) {
	for p, b := range after {
		old, ok := before[p]
		if !ok || bytes.Equal(old, b) || !isYAMLPath(p) {
			continue
		}
		if sameMeaning(old, b) {
			after[p] = old
		}
	}
}

func isYAMLPath(p string) bool {
	return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || p == KptfileName || strings.HasSuffix(p, "/"+KptfileName)
}

// sameMeaning reports whether two YAML streams hold the same documents, in
// the same order, ignoring formatting, comments, map key order and kpt's
// upstream-identifier annotation.
func sameMeaning(a, b []byte) bool {
	ca, err1 := canonical(a)
	cb, err2 := canonical(b)
	return err1 == nil && err2 == nil && ca == cb
}

func canonical(b []byte) (string, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for _, n := range nodes {
		if err := n.PipeE(yaml.ClearAnnotation(upstreamIdentifierAnnotation)); err != nil {
			return "", err
		}
		if md := n.Field(yaml.MetadataField); md != nil {
			if ann := md.Value.Field(yaml.AnnotationsField); ann != nil && len(ann.Value.YNode().Content) == 0 {
				_ = md.Value.PipeE(yaml.Clear(yaml.AnnotationsField))
			}
		}
		j, err := json.Marshal(n)
		if err != nil {
			return "", err
		}
		out.Write(j)
		out.WriteByte('\n')
	}
	return out.String(), nil
}
