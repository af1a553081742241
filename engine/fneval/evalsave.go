package fneval

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// ErrNoKptfile is SaveFunction's answer for a package without a Kptfile;
// kpt reports it and still succeeds.
var ErrNoKptfile = errors.New("function not added: Kptfile not exists")

// SavedFunction is the pipeline entry `kpt fn eval --save` records: the
// function as run (the image with its registry prefix and tag resolved),
// its selection, and its config as a configPath relative to the package or
// the arguments as a configMap.
func SavedFunction(pkgDir string, opts EvalOptions, fnConfigPath string) (kptfilev1.Function, error) {
	f := kptfilev1.Function{Exec: opts.Exec}
	if opts.Image != "" {
		image, err := resolveImage(opts.Image, opts.Tag, opts.ImagePrefix)
		if err != nil {
			return f, err
		}
		f.Image = image
	}
	if !opts.Selector.IsEmpty() {
		f.Selectors = []kptfilev1.Selector{opts.Selector}
	}
	if !opts.Exclusion.IsEmpty() {
		f.Exclusions = []kptfilev1.Selector{opts.Exclusion}
	}
	if fnConfigPath != "" {
		rel, err := ConfigPathIn(pkgDir, fnConfigPath)
		if err != nil {
			return f, err
		}
		f.ConfigPath = rel
	} else {
		f.ConfigMap = argsConfigMap(opts.Args)
	}
	return f, nil
}

// ConfigPathIn is fnConfig relative to the package at pkgDir; --save
// needs the config inside the package, so that render finds it.
func ConfigPathIn(pkgDir, fnConfig string) (string, error) {
	pkgAbs, err := filepath.Abs(pkgDir)
	if err != nil {
		return "", err
	}
	cfgAbs, err := filepath.Abs(fnConfig)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(pkgAbs, cfgAbs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("--fn-config must be under %s if saving functions to Kptfile (--save=true)", pkgAbs)
	}
	return filepath.ToSlash(rel), nil
}

// SaveFunction adds f to the package's pipeline (fnType "mutator" or
// "validator"), replacing an entry with the same image or exec, as `kpt fn
// eval --save`; the rest of the Kptfile keeps its bytes. It returns kpt's
// message ("Added ..." or "Updated ...").
func SaveFunction(pkgDir, fnType string, f kptfilev1.Function) (string, error) {
	path := filepath.Join(pkgDir, kptpkg.KptfileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrNoKptfile
	} else if err != nil {
		return "", err
	}
	if _, err := kptpkg.DecodeKptfile(path, b); err != nil {
		return "", err
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), PreserveSeqIndent: true}).Read()
	if err != nil || len(nodes) != 1 {
		return "", fmt.Errorf("reading %s: expected one YAML document (%v)", path, err)
	}
	kf := nodes[0]
	// kpt writes the saved Kptfile with wide sequences, whatever style it
	// had (kpt's e2e case save-fn/override-fn).
	_ = kf.PipeE(yaml.SetAnnotation(kioutil.SeqIndentAnnotation, string(yaml.WideSequenceStyle)))
	fb, err := yaml.Marshal(f)
	if err != nil {
		return "", err
	}
	entry, err := yaml.Parse(string(fb))
	if err != nil {
		return "", err
	}
	list, err := kf.Pipe(yaml.LookupCreate(yaml.SequenceNode, "pipeline", fnType+"s"))
	if err != nil {
		return "", fmt.Errorf("%s: pipeline.%ss: %w", path, fnType, err)
	}
	name, verb := f.Image, "Added"
	if name == "" {
		name = f.Exec
	}
	var kept []*yaml.Node
	for _, n := range list.YNode().Content {
		m := yaml.NewRNode(n)
		same := f.Image != "" && fieldValue(m, "image") == f.Image || f.Exec != "" && fieldValue(m, "exec") == f.Exec
		if !same {
			kept = append(kept, n)
			continue
		}
		verb = "Updated"
		kept = append(kept, entry.YNode())
	}
	if verb == "Added" {
		kept = append(kept, entry.YNode())
	}
	list.YNode().Content = kept
	var out bytes.Buffer
	if err := (&kio.ByteWriter{Writer: &out}).Write([]*yaml.RNode{kf}); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("function is not added to Kptfile: %w", err)
	}
	return fmt.Sprintf("%s %q as %s in the Kptfile.", verb, name, fnType), nil
}

func fieldValue(n *yaml.RNode, field string) string {
	if f := n.Field(field); f != nil && f.Value != nil {
		return yaml.GetValue(f.Value)
	}
	return ""
}

// ResolveSymlink is kpt's for a package argument: a symlink is followed,
// with kpt's warning to w that links inside the package are not.
func ResolveSymlink(w io.Writer, dir string) (string, error) {
	fi, lerr := os.Lstat(dir)
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if lerr == nil && fi.Mode().Type() == os.ModeSymlink {
		fmt.Fprintf(w, "[WARN] resolved symlink %q to %q, please note that the symlinks within the package are ignored\n", dir, resolved)
	}
	return resolved, nil
}
