package builtins

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// imageSpec is set-image's configuration, in both the ConfigMap and the
// SetImage form.
type imageSpec struct {
	Name    string `yaml:"name"`
	NewName string `yaml:"newName"`
	NewTag  string `yaml:"newTag"`
	Digest  string `yaml:"digest"`
}

// skipWithoutImage: an item whose text lacks the image name has no matching
// image field. With a bad config nothing is skipped, so the error is
// reported as usual.
func skipWithoutImage(cfg *yaml.RNode) func([]byte) bool {
	img, _, err := imageConfig(cfg)
	if err != nil {
		return nil
	}
	name := []byte(img.Name)
	return func(chunk []byte) bool { return !bytes.Contains(chunk, name) }
}

func imageConfig(cfg *yaml.RNode) (imageSpec, types.FsSlice, error) {
	var img imageSpec
	var extra types.FsSlice
	k := kindOf(cfg)
	switch {
	case k.isConfigMap():
		data, err := stringMap(cfg, "data")
		if err != nil {
			return img, nil, err
		}
		for key, val := range data {
			switch key {
			case "name":
				img.Name = val
			case "newName":
				img.NewName = val
			case "newTag":
				img.NewTag = val
			case "digest":
				img.Digest = val
			default:
				return img, nil, fmt.Errorf("functionConfig: ConfigMap has wrong field name %s, expected name, newName, newTag or digest", key)
			}
		}
	case k.is("SetImage"):
		if f := cfg.Field("image"); f != nil && !yaml.IsMissingOrNull(f.Value) {
			if err := f.Value.YNode().Decode(&img); err != nil {
				return img, nil, fmt.Errorf("functionConfig: image: %w", err)
			}
		}
		var err error
		if extra, err = decodeFieldSpecs(cfg, "additionalImageFields"); err != nil {
			return img, nil, err
		}
	default:
		return img, nil, fmt.Errorf("functionConfig: expected ConfigMap data or SetImage image, got kind %s", k)
	}
	switch {
	case img.Name == "":
		return img, nil, errors.New("functionConfig: must specify `name`")
	case img.NewName == "" && img.NewTag == "" && img.Digest == "":
		return img, nil, errors.New("functionConfig: must specify one of `newName`, `newTag`, or `digest`")
	case img.NewTag != "" && img.Digest != "":
		return img, nil, errors.New("functionConfig: `newTag` and `digest` cannot both be specified")
	}
	return img, extra, nil
}

// splitImage splits an image reference into its name, ":tag" and
// "@digest" parts; tag and digest keep their separators.
func splitImage(ref string) (name, tag, digest string) {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref, digest = ref[:i], ref[i:]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref, tag = ref[:i], ref[i:]
	}
	return ref, tag, digest
}
