package kptpkg

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"github.com/kptdev/kpt/pkg/kptfile/kptfileutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// KptfileName is the name of the package manifest.
const KptfileName = kptfilev1.KptFileName

// ReadKptfile reads and strictly decodes dir/Kptfile. Errors name the file,
// the line and the field at fault.
func ReadKptfile(dir string) (*kptfilev1.KptFile, error) {
	p := filepath.Join(dir, KptfileName)
	b, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("reading %s: no Kptfile: %q is not a kpt package: %w", p, dir, err)
		}
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	return DecodeKptfile(p, b)
}

var yamlLineErr = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+): field (\S+) not found in type (\S+)`) })

// DecodeKptfile strictly decodes the Kptfile content b read from name.
func DecodeKptfile(name string, b []byte) (*kptfilev1.KptFile, error) {
	b, err := WithoutRenderStatus(b)
	if err != nil {
		return nil, fmt.Errorf("invalid %s: %w", name, err)
	}
	kf := decodeV1(b)
	if kf == nil {
		if kf, err = kptfileutil.DecodeKptfile(bytes.NewReader(b)); err != nil {
			msg := err.Error()
			msg = yamlLineErr().ReplaceAllString(msg, `line $1: unknown field "$2" (not a field of $3)`)
			msg = strings.TrimPrefix(msg, "yaml: unmarshal errors:\n")
			msg = strings.ReplaceAll(msg, "\n", "; ")
			return nil, fmt.Errorf("invalid %s: %s", name, strings.TrimSpace(msg))
		}
	}
	if err := validateKptfile(kf); err != nil {
		return nil, fmt.Errorf("invalid %s: %w", name, err)
	}
	return kf, nil
}

// decodeV1 is kptfileutil.DecodeKptfile for a kpt.dev/v1 Kptfile: the
// same strict decode, without kpt's first pass (a whole parse of the file
// to read its apiVersion and kind, which the strict decode reads too).
// It returns nil for anything else, and for aliases and merge keys, which
// kpt's first pass reads unresolved: kpt's decode words those errors.
func decodeV1(b []byte) *kptfilev1.KptFile {
	if bytes.Contains(b, []byte("*")) || bytes.Contains(b, []byte("<<")) {
		return nil
	}
	kf := &kptfilev1.KptFile{}
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if d.Decode(kf) != nil || kf.APIVersion != kptfilev1.KptFileAPIVersion || kf.Kind != kptfilev1.KptFileKind {
		return nil
	}
	return kf
}

func validateKptfile(kf *kptfilev1.KptFile) error {
	if kf.Name == "" {
		return fmt.Errorf("metadata.name: must be set")
	}
	if kf.Pipeline != nil {
		for kind, fns := range map[string][]kptfilev1.Function{"mutators": kf.Pipeline.Mutators, "validators": kf.Pipeline.Validators} {
			for i, f := range fns {
				field := fmt.Sprintf("pipeline.%s[%d]", kind, i)
				if f.Image == "" && f.Exec == "" {
					return fmt.Errorf("%s: one of image or exec must be set", field)
				}
				if f.Image != "" && f.Exec != "" {
					return fmt.Errorf("%s: image %q and exec %q are mutually exclusive", field, f.Image, f.Exec)
				}
				if f.ConfigPath != "" && len(f.ConfigMap) > 0 {
					return fmt.Errorf("%s: configPath and configMap are mutually exclusive (function %s)", field, fnLabel(f))
				}
			}
		}
	}
	if kf.Upstream != nil && kf.Upstream.Type == kptfilev1.GitOrigin && kf.Upstream.Git == nil {
		return fmt.Errorf("upstream.git: must be set when upstream.type is git")
	}
	// A generic upstream or lock must be complete; other origin types kpt
	// does not know are left for the operations that use them to refuse.
	if kf.Upstream != nil && kf.Upstream.Type == GenericOrigin {
		if _, err := UpstreamOf(kf); err != nil {
			return err
		}
	}
	if kf.UpstreamLock != nil && kf.UpstreamLock.Type == GenericOrigin {
		if _, err := LockOf(kf); err != nil {
			return err
		}
	}
	return nil
}

func fnLabel(f kptfilev1.Function) string {
	switch {
	case f.Name != "":
		return fmt.Sprintf("%q (%s)", f.Name, f.Image+f.Exec)
	default:
		return f.Image + f.Exec
	}
}

// WriteKptfile writes kf to dir/Kptfile in kpt's canonical layout.
func WriteKptfile(dir string, kf *kptfilev1.KptFile) error {
	if err := kptfileutil.WriteFile(dir, kf); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, KptfileName), err)
	}
	return nil
}

// SetKptfileAnnotation sets a metadata annotation in Kptfile content,
// keeping the rest of its layout.
func SetKptfileAnnotation(kptfile []byte, key, value string) ([]byte, error) {
	return EditKptfile(kptfile, func(kf *yaml.RNode) error {
		return kf.PipeE(yaml.SetAnnotation(key, value))
	})
}

// WithoutRenderStatus checks and removes status.renderStatus, which kpt
// v1.0.0-beta.62 and later write after a render and the Kptfile types
// kptbot decodes with predate: a package kpt rendered must read. The
// render status is kpt's record of the last render; a render replaces it.
func WithoutRenderStatus(b []byte) ([]byte, error) {
	if !bytes.Contains(b, []byte("renderStatus")) {
		return b, nil
	}
	n, err := yaml.Parse(string(b))
	if err != nil {
		return b, nil // the strict decode reports it
	}
	status := n.Field("status")
	if status == nil || status.Value.Field("renderStatus") == nil {
		return b, nil
	}
	rs, err := status.Value.Field("renderStatus").Value.String()
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(strings.NewReader(rs))
	dec.KnownFields(true)
	var check RenderStatus
	if err := dec.Decode(&check); err != nil {
		return nil, fmt.Errorf("status.renderStatus: %w", err)
	}
	if _, err := status.Value.Pipe(yaml.Clear("renderStatus")); err != nil {
		return nil, err
	}
	out, err := n.String()
	if err != nil {
		return nil, err
	}
	return []byte(out), nil
}

// EditKptfile applies edit to Kptfile content, keeping its layout
// (comments, field order, sequence indentation).
func EditKptfile(kptfile []byte, edit func(kf *yaml.RNode) error) ([]byte, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(kptfile), PreserveSeqIndent: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("reading Kptfile: %w", err)
	}
	if len(nodes) != 1 {
		return nil, fmt.Errorf("reading Kptfile: expected one document, found %d", len(nodes))
	}
	if err := edit(nodes[0]); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := (&kio.ByteWriter{Writer: &out}).Write(nodes); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// PipelineFunctions lists the mutators (or validators) of p, nil when p is
// nil.
func PipelineFunctions(p *kptfilev1.Pipeline, mutators bool) []kptfilev1.Function {
	if p == nil {
		return nil
	}
	if mutators {
		return p.Mutators
	}
	return p.Validators
}

// Kptfiles decodes each distinct Kptfile content once (DecodeKptfile):
// one render reads the same Kptfiles in several places. The KptFiles it
// returns are shared and must not be modified. The zero value is ready;
// a nil *Kptfiles decodes every time.
type Kptfiles struct {
	mu      sync.Mutex
	decoded map[string]*kptfilev1.KptFile
}

// Decode is DecodeKptfile(name, b), from memory when b was decoded before.
func (k *Kptfiles) Decode(name string, b []byte) (*kptfilev1.KptFile, error) {
	if k == nil {
		return DecodeKptfile(name, b)
	}
	k.mu.Lock()
	kf := k.decoded[string(b)]
	k.mu.Unlock()
	if kf != nil {
		return kf, nil
	}
	kf, err := DecodeKptfile(name, b)
	if err != nil {
		return nil, err // errors name the file: not shared between names
	}
	k.mu.Lock()
	if k.decoded == nil {
		k.decoded = map[string]*kptfilev1.KptFile{}
	}
	k.decoded[string(b)] = kf
	k.mu.Unlock()
	return kf, nil
}
