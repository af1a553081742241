package kptpkg

import (
	"fmt"
	"path/filepath"
	"strings"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ValidateFunctions is kpt's KptFile.Validate, as kpt checks a package's
// Kptfile before a render (same rules, same errors), with the image names
// checked by ValidImageName: kpt's check compiles its regular expression
// on every call, which was the larger part of a small render's validation.
func ValidateFunctions(fsys filesys.FileSystem, pkgPath string, kf *kptfilev1.KptFile) error {
	if kf.Pipeline == nil {
		return nil
	}
	for kind, fns := range [2][]kptfilev1.Function{kf.Pipeline.Mutators, kf.Pipeline.Validators} {
		for i := range fns {
			if err := validateFunction(fsys, pkgPath, &fns[i], [2]string{"mutators", "validators"}[kind], i); err != nil {
				return fmt.Errorf("invalid pipeline: function %q: %w", fns[i].Image, err)
			}
		}
	}
	return nil
}

// validateFunction is kpt's Function.validate.
func validateFunction(fsys filesys.FileSystem, pkgPath string, f *kptfilev1.Function, kind string, i int) error {
	field := fmt.Sprintf("pipeline.%s[%d]", kind, i)
	switch {
	case f.Image == "" && f.Exec == "":
		return &kptfilev1.ValidateError{Field: field, Reason: "must specify a functon (`image` or `exec`) to execute"}
	case f.Image != "" && f.Exec != "":
		return &kptfilev1.ValidateError{Field: field, Reason: "must not specify both `image` and `exec` at the same time"}
	case f.Image != "" && !ValidImageName(f.Image):
		return &kptfilev1.ValidateError{Field: field + ".image", Value: f.Image, Reason: fmt.Sprintf("function name %q is invalid", f.Image)}
	case len(f.ConfigMap) != 0 && f.ConfigPath != "":
		return &kptfilev1.ValidateError{Field: field, Reason: "functionConfig must not specify both `configMap` and `configPath` at the same time"}
	case f.ConfigPath == "":
		return nil
	}
	if err := configPathSyntax(f.ConfigPath); err != nil {
		return &kptfilev1.ValidateError{Field: field + ".configPath", Value: f.ConfigPath, Reason: err.Error()}
	}
	if err := readConfig(kptfilev1.GetValidatedFnConfigFromPath, fsys, pkgPath, f.ConfigPath); err != nil {
		return &kptfilev1.ValidateError{Field: field + ".configPath", Value: f.ConfigPath, Reason: err.Error()}
	}
	return nil
}

// readConfig calls kpt's GetValidatedFnConfigFromPath, whose package path
// is of a type internal to kpt: P is inferred from the function.
func readConfig[P ~string](read func(filesys.FileSystem, P, string) (*yaml.RNode, error), fsys filesys.FileSystem, pkgPath, configPath string) error {
	_, err := read(fsys, P(pkgPath), configPath)
	return err
}

// configPathSyntax is kpt's validateFnConfigPathSyntax.
func configPathSyntax(p string) error {
	if strings.TrimSpace(p) == "" {
		return fmt.Errorf("path must not be empty")
	}
	p = filepath.Clean(p)
	if filepath.IsAbs(p) {
		return fmt.Errorf("path must be relative")
	}
	if strings.Contains(p, "..") {
		return fmt.Errorf("path must not be outside the package")
	}
	return nil
}
