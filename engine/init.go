package engine

import (
	"fmt"
	"os"
	"path/filepath"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"github.com/kptdev/kpt/pkg/kptfile/kptfileutil"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// InitOptions configures Init.
type InitOptions struct {
	Description string
	Keywords    []string
	Site        string
}

// Init turns dir into a kpt package, as `kpt pkg init`: a Kptfile named
// after the directory, a README.md and the package-context.yaml template.
// Files that already exist are left alone, except that an existing Kptfile
// is an error.
func Init(dir string, opts InitOptions) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(abs)
	if _, err := os.Stat(filepath.Join(dir, kptpkg.KptfileName)); err == nil {
		return nil, fmt.Errorf("%s already has a Kptfile: it is already a kpt package", dir)
	}
	kf := kptfileutil.DefaultKptfile(name)
	kf.Annotations = map[string]string{"config.kubernetes.io/local-config": "true"}
	if opts.Description != "" || opts.Site != "" || len(opts.Keywords) > 0 {
		kf.Info = &kptfilev1.PackageInfo{Description: opts.Description, Site: opts.Site, Keywords: opts.Keywords}
	}
	if err := kptpkg.WriteKptfile(dir, kf); err != nil {
		return nil, err
	}
	created := []string{kptpkg.KptfileName}
	readme := fmt.Sprintf(readmeTemplate, name, opts.Description, name, name)
	for file, content := range map[string]string{
		"README.md":        readme,
		PackageContextFile: packageContext("example"), // kpt init writes the template value
	} {
		p := filepath.Join(dir, file)
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return nil, fmt.Errorf("writing %s: %w", p, err)
		}
		created = append(created, file)
	}
	return created, nil
}

const readmeTemplate = "# %s\n\n## Description\n%s\n\n## Usage\n\n### Fetch the package\n" +
	"`kptbot pkg get REPO_URI[.git]/PKG_PATH[@VERSION] %s`\n\n" +
	"### Render the package\n`kptbot fn render %s`\n"
