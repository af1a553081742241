package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kptbot/kptbot/engine/kptpkg"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// AreKRM is kpt's AreKRM with a fast path: checking apiVersion, kind and
// metadata.name directly avoids decoding every resource's metadata before
// and after every function; kpt's own check produces the error message.
func AreKRM(nodes []*yaml.RNode) error {
	for _, n := range nodes {
		if !looksKRM(n.YNode()) {
			return kptfilev1.AreKRM(nodes)
		}
	}
	return nil
}

func looksKRM(n *yaml.Node) bool {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return false
	}
	var api, kind, name bool
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		switch k {
		case "apiVersion":
			api = v.Kind == yaml.ScalarNode && v.Value != ""
		case "kind":
			kind = v.Kind == yaml.ScalarNode && v.Value != ""
		case "metadata":
			if v.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(v.Content); j += 2 {
					if v.Content[j].Value == "name" {
						name = v.Content[j+1].Kind == yaml.ScalarNode && v.Content[j+1].Value != ""
					}
				}
			}
		}
	}
	return api && kind && name
}

// changedOnly drops the resources of files whose resources all mean what
// they meant before the render (same count, order and fingerprints): those
// files keep their bytes, comments and quirks included, and cost nothing
// to write.
func (h *hydrator) changedOnly(resources []*yaml.RNode) []*yaml.RNode {
	byFile := map[string][]*yaml.RNode{}
	for _, r := range resources {
		p := filepath.ToSlash(kptpkg.FilePath(r))
		byFile[p] = append(byFile[p], r)
	}
	unchanged := map[string]bool{}
	for p, rs := range byFile {
		before, ok := h.before[p]
		unchanged[p] = ok && kptpkg.MeansAsRead(h.seed, before, rs)
	}
	out := resources[:0:0]
	for _, r := range resources {
		if !unchanged[filepath.ToSlash(kptpkg.FilePath(r))] {
			out = append(out, r)
		}
	}
	return out
}

// write makes resources' paths relative to the root, writes them as kpt's
// renderer does, and prunes files whose resources are all gone.
func (h *hydrator) write(resources []*yaml.RNode) error {
	outFiles := map[string]bool{}
	for _, r := range resources {
		pkgPath := kptpkg.Annotation(r, PkgPathAnnotation)
		cur := kptpkg.FilePath(r)
		rel := filepath.Clean(cur)
		if pkgPath == h.root && cur != "" {
			// kpt joins the path to the package's, "." for the root: a
			// leading "/" means the package's directory
			rel = filepath.Join(".", rel)
		}
		if pkgPath != "" && pkgPath != h.root {
			sub := strings.TrimPrefix(pkgPath, h.root+"/")
			if sub == pkgPath {
				return fmt.Errorf("resource of package %q is outside the root package", pkgPath)
			}
			rel = filepath.Join(sub, rel)
		}
		if cur != "" {
			if rel != cur {
				if err := r.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, rel)); err != nil {
					return err
				}
				if err := r.PipeE(yaml.SetAnnotation(kioutil.LegacyPathAnnotation, rel)); err != nil { //nolint:staticcheck // kpt sets both
					return err
				}
			}
			outFiles[filepath.ToSlash(rel)] = true
		}
		if kptpkg.AnnotationNode(r.YNode(), PkgPathAnnotation) != nil {
			if err := r.PipeE(yaml.ClearAnnotation(PkgPathAnnotation)); err != nil {
				return err
			}
		}
	}
	// kpt attributes Config Connector resources to the fn command group
	// (best effort: a failure leaves the resource as it is).
	for _, r := range resources {
		_ = kptpkg.Attribute(r, "fn")
	}
	resources = h.changedOnly(resources)
	// kpt writes through kio.LocalPackageReadWriter, which writes as
	// LocalPackageWriter and deletes nothing it did not read.
	if err := kptpkg.WritePackage(filesys.FileSystemOrOnDisk{FileSystem: h.fsys}, h.root, resources, nil); err != nil {
		return fmt.Errorf("failed to save resources: %w", err)
	}
	for f := range h.input {
		if !outFiles[f] {
			if err := h.fsys.RemoveAll(filepath.Join(h.root, filepath.FromSlash(f))); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("failed to delete file: %w", err)
			}
		}
	}
	return nil
}
