package builtins

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kptbot/kptbot/engine/builtins/fieldspec"
	"github.com/kptbot/kptbot/engine/builtins/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
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

// imageConfig reads set-image's configuration as the catalog's SDK and
// SetImage do, and returns the results they report about it (an error
// result makes the function fail). fatal: the SDK refused the config and
// the function does not run at all.
func imageConfig(cfg *yaml.RNode) (img imageSpec, extra types.FsSlice, res fn.Results, fatal bool) {
	k := resourcelist.KindOf(cfg)
	switch {
	case k.Kind == "":
		res = append(res, &fn.Result{Message: "`FunctionConfig` is not given", Severity: fn.Info})
	case k.IsConfigMap():
		data, err := resourcelist.StringMap(cfg, "data")
		if err != nil {
			return img, nil, fn.Results{{Message: err.Error(), Severity: fn.Error}}, true
		}
		for _, key := range yaml.SortedMapKeys(data) {
			switch val := data[key]; key {
			case "name":
				img.Name = val
			case "newName":
				img.NewName = val
			case "newTag":
				img.NewTag = val
			case "digest":
				img.Digest = val
			default:
				// the catalog formats the message as a format string with
				// one argument too many; its results carry the residue
				res = append(res, &fn.Result{Message: fmt.Sprintf("ConfigMap has wrong field name %v", key) + "%!(EXTRA <nil>)", Severity: fn.Error})
			}
			if resourcelist.FirstError(res) != nil {
				break
			}
		}
	case k.Is("SetImage"):
		if f := cfg.Field("image"); f != nil && !yaml.IsMissingOrNull(f.Value) {
			if err := f.Value.YNode().Decode(&img); err != nil {
				return img, nil, fn.Results{{Message: err.Error(), Severity: fn.Error}}, true
			}
		}
		var err error
		if extra, err = fieldspec.Decode(cfg, "additionalImageFields"); err != nil {
			return img, nil, fn.Results{{Message: err.Error(), Severity: fn.Error}}, true
		}
	default:
		gk := k.Kind
		if k.Group != "" {
			gk += "." + k.Group
		}
		return img, nil, fn.Results{{Message: fmt.Sprintf("unknown FunctionConfig `%s`, expect `SetImage.fn.kpt.dev` or `ConfigMap.v1`", gk), Severity: fn.Error}}, true
	}
	switch {
	case img.Name == "":
		res = append(res, &fn.Result{Message: "invalid FunctionConfig: must specify `name`", Severity: fn.Error})
	case img.NewName == "" && img.NewTag == "" && img.Digest == "":
		res = append(res, &fn.Result{Message: "invalid FunctionConfig: must specify one of `newName`, `newTag`, or `digest`", Severity: fn.Error})
	}
	return img, extra, res, false
}

// runSetImage is set-image on the whole list. With a configuration the
// catalog reports problems with, it still runs what it understood, as the
// catalog does (its count goes into the summary), and fails.
func runSetImage(rl *resourcelist.List) error {
	img, extra, res, fatal := imageConfig(rl.FunctionConfig)
	if resourcelist.FirstError(res) == nil {
		return streamed(streamSetImage)(rl)
	}
	rl.Results = append(rl.Results, res...)
	if fatal {
		return nil
	}
	n, err := setImages(rl.Items, img, extra)
	if err != nil {
		return err
	}
	rl.Results = append(rl.Results, imageSummary(n))
	return nil
}

// streamSetImage is set-image with a configuration the catalog accepts.
func streamSetImage(cfg *yaml.RNode) (*Stream, error) {
	img, extra, res, _ := imageConfig(cfg)
	if e := resourcelist.FirstError(res); e != nil {
		return nil, fmt.Errorf("%s", e.Message)
	}
	return counting(func(items []*yaml.RNode) (int, error) { return setImages(items, img, extra) }, imageSummary), nil
}

func imageSummary(n int) *fn.Result {
	return &fn.Result{Message: fmt.Sprintf("summary: updated a total of %d image(s)", n), Severity: fn.Info}
}

// setImages is kustomize's image tag filter as the catalog's set-image
// runs it: every image field the field specs locate whose value matches
// img.Name (a regular expression, anchored, optionally followed by a tag
// and a sha256 digest) gets the new name, tag and digest, and is counted
// even when its value stays the same.
func setImages(items []*yaml.RNode, img imageSpec, extra types.FsSlice) (int, error) {
	match, err := regexp.Compile("^" + img.Name + "(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$")
	if err != nil {
		return 0, nil // kustomize ignores the pattern's error and matches nothing
	}
	count := 0
	set := func(v *yaml.Node) error {
		if v.Kind != yaml.ScalarNode || !match.MatchString(v.Value) {
			return nil
		}
		name, tag, digest := splitImage(v.Value)
		if img.NewName != "" {
			name = img.NewName
		}
		switch {
		case img.NewTag != "" && img.Digest != "":
			tag, digest = img.NewTag, img.Digest
		case img.NewTag != "":
			tag, digest = img.NewTag, ""
		case img.Digest != "":
			tag, digest = "", img.Digest
		}
		if tag != "" {
			name += ":" + tag
		}
		if digest != "" {
			name += "@" + digest
		}
		count++
		if name != v.Value {
			setString(v, name)
		}
		return nil
	}
	err = fieldspec.Apply(items, fieldspec.Images(), 0, nil, set)
	if err == nil && len(extra) > 0 {
		err = fieldspec.Apply(items, extra, 0, nil, set)
	}
	return count, err
}

// splitImage is kustomize's image.Split: name, tag and digest (without
// their separators); a ':' or '@' before the first '/' belongs to the
// registry host.
func splitImage(ref string) (name, tag, digest string) {
	search, offset := ref, 0
	if i := strings.Index(ref, "/"); i > 0 {
		search, offset = ref[i:], i
	}
	id, ic := strings.Index(search, "@"), strings.Index(search, ":")
	switch {
	case ic < 0 && id < 0:
		return ref, "", ""
	case id >= 0 && (id < ic || ic < 0):
		return ref[:id+offset], "", ref[id+offset+1:]
	case id >= 0:
		return ref[:ic+offset], ref[ic+offset+1 : id+offset], ref[id+offset+1:]
	}
	return ref[:ic+offset], ref[ic+offset+1:], ""
}
