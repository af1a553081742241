package render

import (
	"fmt"
	"path/filepath"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// validateKptfile is kpt's Kptfile validation as it reads a package for a
// render: image names well formed, configPath relative, inside the package
// and naming one KRM resource.
func (h *hydrator) validateKptfile(dir string, kf *kptfilev1.KptFile) error {
	if h.fsys == nil {
		return nil // the streamed render takes only packages whose configs it read
	}
	return kptpkg.ValidateFunctions(h.fsys, h.abs(dir), kf)
}

// validatePipeline is kpt's ValidatePipeline: every configPath names one
// of the package's own resources (a file the package reader reads, not
// one .krmignore hides).
func validatePipeline(pl *kptfilev1.Pipeline, local []*yaml.RNode) error {
	have := map[string]bool{}
	for _, r := range local {
		p, _, err := kioutil.GetFileAnnotations(r)
		if err != nil {
			return fmt.Errorf("resource missing path annotation err: %w", err)
		}
		have[filepath.Clean(p)] = true
	}
	for kind, fns := range [2][]kptfilev1.Function{pl.Mutators, pl.Validators} {
		for i, f := range fns {
			if f.ConfigPath != "" && !have[filepath.Clean(f.ConfigPath)] {
				return &kptfilev1.ValidateError{
					Field:  fmt.Sprintf("pipeline.%s[%d].configPath", [2]string{"mutators", "validators"}[kind], i),
					Value:  f.ConfigPath,
					Reason: "functionConfig must exist in the current package",
				}
			}
		}
	}
	return nil
}
