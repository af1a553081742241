package pkgmerge

import (
	"strings"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// mergeKey is kpt's resourceMergeMatcher identity: group, kind, the
// namespace and name from the kpt-merge comment (else metadata), and the
// file path.
func mergeKey(n *yaml.RNode) (string, error) {
	if k, ok := quickMergeKey(n); ok {
		return k, nil
	}
	return slowMergeKey(n)
}

// legacyPairs are the annotations kioutil.CopyLegacyAnnotations keeps in
// step with their legacy forms.
var legacyPairs = [][2]string{
	{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation},   //nolint:staticcheck // kio reads both
	{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation}, //nolint:staticcheck // kio reads both
	{kioutil.IdAnnotation, kioutil.LegacyIdAnnotation},       //nolint:staticcheck // kio reads both
}

// quickMergeKey is slowMergeKey read straight from the nodes for the usual
// resource (plain metadata, legacy annotations already in step with
// their current forms, so CopyLegacyAnnotations has nothing to do): kyaml's
// GetMeta builds two RNodes per field it looks at and copies every label
// and annotation, which made the keys a tenth of an update's allocations.
// ok is false for anything else.
func quickMergeKey(n *yaml.RNode) (key string, ok bool) {
	if yaml.IsMissingOrNull(n) {
		return "", false
	}
	root := n.YNode()
	if root.Kind != yaml.MappingNode || !kptpkg.PlainMetadata(root) {
		return "", false
	}
	present := func(v *yaml.Node) bool { return v != nil && !yaml.IsYNodeNilOrEmpty(v) }
	value := func(v *yaml.Node) string {
		if v == nil || v.Tag == yaml.NodeTagNull {
			return ""
		}
		return v.Value
	}
	var mdKey, md, ann *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == yaml.MetadataField {
			mdKey, md = root.Content[i], root.Content[i+1]
			break
		}
	}
	if !present(md) {
		return "", false // GetMeta's rules for missing metadata: kyaml decides
	}
	if a := kptpkg.MapValue(md, yaml.AnnotationsField); present(a) {
		ann = a
		for i := 0; i < len(ann.Content); i += 2 {
			if ann.Content[i].Tag == yaml.NodeTagNull {
				return "", false
			}
		}
	}
	for _, p := range legacyPairs {
		if (value(kptpkg.MapValue(ann, p[0])) == "") != (value(kptpkg.MapValue(ann, p[1])) == "") {
			return "", false
		}
	}
	var apiVersion, kind, ns, name string
	missing := true
	if v := kptpkg.MapValue(root, yaml.APIVersionField); present(v) {
		apiVersion, missing = value(v), false
	}
	if v := kptpkg.MapValue(root, yaml.KindField); present(v) {
		kind, missing = value(v), false
	}
	if v := kptpkg.MapValue(md, yaml.NameField); present(v) {
		name, missing = v.Value, false
	}
	if v := kptpkg.MapValue(md, yaml.NamespaceField); present(v) {
		ns, missing = value(v), false
	}
	if present(kptpkg.MapValue(md, yaml.LabelsField)) || ann != nil {
		missing = false
	}
	if missing {
		return "", false
	}
	group, _ := resid.ParseGroupVersion(apiVersion)
	c := strings.TrimSpace(strings.TrimPrefix(mdKey.LineComment, "#"))
	if strings.HasPrefix(c, "kpt-merge:") {
		if parts := strings.SplitN(strings.TrimSpace(strings.TrimPrefix(c, "kpt-merge:")), "/", 2); len(parts) == 2 {
			ns, name = parts[0], parts[1]
		}
	}
	return strings.Join([]string{group, kind, ns, name, value(kptpkg.MapValue(ann, kioutil.PathAnnotation))}, "\x00"), true
}

// slowMergeKey is mergeKey through kyaml's own functions.
func slowMergeKey(n *yaml.RNode) (string, error) {
	if err := kioutil.CopyLegacyAnnotations(n); err != nil {
		return "", err
	}
	meta, err := n.GetMeta()
	if err != nil {
		return "", err
	}
	group, _ := resid.ParseGroupVersion(meta.APIVersion)
	ns, name := meta.Namespace, meta.Name
	if mf := n.Field(yaml.MetadataField); !mf.IsNilOrEmpty() {
		c := strings.TrimSpace(strings.TrimPrefix(mf.Key.YNode().LineComment, "#"))
		if strings.HasPrefix(c, "kpt-merge:") {
			if parts := strings.SplitN(strings.TrimSpace(strings.TrimPrefix(c, "kpt-merge:")), "/", 2); len(parts) == 2 {
				ns, name = parts[0], parts[1]
			}
		}
	}
	return strings.Join([]string{group, meta.Kind, ns, name, meta.Annotations[kioutil.PathAnnotation]}, "\x00"), nil
}
