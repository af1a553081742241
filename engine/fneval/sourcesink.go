package fneval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// SourceOptions are `kpt fn source`'s flags.
type SourceOptions struct {
	// Output is "stdout" (a ResourceList keeping kpt's path and index
	// annotations; the default when empty) or "unwrap" (plain YAML
	// without them).
	Output string
	// FnConfig is the --fn-config file, given as the list's functionConfig.
	FnConfig string
}

// Source writes the resources of the package at each of dirs
// (subpackages and the Kptfile included) to w as `kpt fn source` does,
// ready for `fn eval -`; the warning for a symlinked directory goes to
// warn.
func Source(ctx context.Context, w, warn io.Writer, dirs []string, opts SourceOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if opts.Output == "" {
		opts.Output = "stdout"
	}
	if opts.Output != "stdout" && opts.Output != "unwrap" {
		return fmt.Errorf("invalid input for --output flag %q, must be %q or %q", opts.Output, "stdout", "unwrap")
	}
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	var fnConfig *yaml.RNode
	if opts.FnConfig != "" {
		configs, err := kio.LocalPackageReader{PackagePath: opts.FnConfig, PreserveSeqIndent: true, WrapBareSeqNode: true}.Read()
		if err != nil {
			return fmt.Errorf("reading --fn-config %q: %w", opts.FnConfig, err)
		}
		if len(configs) != 1 {
			return fmt.Errorf("expected exactly 1 functionConfig, found %d", len(configs))
		}
		fnConfig = configs[0]
	}
	var inputs []kio.Reader
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return fmt.Errorf("cannot convert input path %q to absolute path: %w", d, err)
		}
		resolved, err := ResolveSymlink(warn, abs)
		if err != nil {
			return fmt.Errorf("reading the package %q: %w", d, err)
		}
		inputs = append(inputs, kio.LocalPackageReader{
			PackagePath:        resolved,
			MatchFilesGlob:     append([]string{kptpkg.KptfileName}, kio.MatchAll...),
			PreserveSeqIndent:  true,
			PackageFileName:    kptpkg.KptfileName,
			IncludeSubpackages: true,
			WrapBareSeqNode:    true,
		})
	}
	out := kio.ByteWriter{Writer: w, FunctionConfig: fnConfig}
	if opts.Output == "stdout" {
		out.KeepReaderAnnotations = true
		out.WrappingKind, out.WrappingAPIVersion = kio.ResourceListKind, kio.ResourceListAPIVersion
	} else {
		out.ClearAnnotations = []string{kioutil.IndexAnnotation, kioutil.PathAnnotation,
			kioutil.LegacyIndexAnnotation, kioutil.LegacyPathAnnotation} //nolint:staticcheck // kpt clears both
	}
	return kio.Pipeline{Inputs: inputs, Outputs: []kio.Writer{out}}.Execute()
}

// Sink writes the resources of the ResourceList (or YAML stream) read
// from r into dir, file by file from their path annotations, as `kpt fn
// sink` does: dir must not exist yet, so nothing already there is
// overwritten or left stale.
func Sink(ctx context.Context, r io.Reader, dir string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("directory %q already exists, please delete the directory and retry", dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("failed to create output directory %q: %w", dir, err)
	}
	return kio.Pipeline{
		Inputs:  []kio.Reader{&kio.ByteReader{Reader: r, PreserveSeqIndent: true, WrapBareSeqNode: true}},
		Outputs: []kio.Writer{&kio.LocalPackageWriter{PackagePath: dir}},
	}.Execute()
}
