package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"github.com/kptdev/kpt/pkg/kptfile/kptfileutil"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// The fast-forward, force-delete-replace and copy-merge strategies, with
// kpt's semantics (internal/util/update in kpt, which kptbot cannot
// import without linking client-go and kubectl's schemes into every
// process: their initialisation alone cost ~15 ms per CLI call). The
// file walks (update_pkgutil.go) are kpt's pkgutil ones; where kpt's
// behaviour is odd it is kept, and said so.

// errLocalChanges is fast-forward's refusal.
var errLocalChanges = errors.New("local package files have been modified")

// fastForward replaces the package by the updated one when it has no
// local changes against the origin (kpt's FastForwardUpdater).
func fastForward(localPath, updatedPath, originPath string, isRoot bool) error {
	if err := checkNoLocalChanges(localPath, originPath); err != nil {
		return err
	}
	return replacePackage(localPath, updatedPath, originPath, isRoot)
}

// checkNoLocalChanges fails naming every file of the package (and of its
// local subpackages) that differs from the origin.
func checkNoLocalChanges(localPath, originPath string) error {
	if _, err := os.Stat(originPath); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	subs, err := subpackagesOf(matchLocal, localPath, originPath)
	if err != nil {
		return err
	}
	changed := map[string]bool{}
	for _, sub := range append([]string{"."}, subs...) {
		local, origin := filepath.Join(localPath, sub), filepath.Join(originPath, sub)
		if !exists(local) || !exists(origin) {
			changed[sub+" (Package)"] = true
			continue
		}
		d, err := packageDiff(local, origin)
		if err != nil {
			return err
		}
		// A Kptfile created locally for an origin without one is no
		// change unless it says more than the default.
		if d[kptpkg.KptfileName] && sub == "." {
			differs, err := kptfileDiffers(local, origin)
			if err != nil {
				return err
			}
			if !differs {
				delete(d, kptpkg.KptfileName)
			}
		}
		for f := range d {
			changed[f] = true
		}
	}
	if len(changed) == 0 {
		return nil
	}
	list := make([]string, 0, len(changed))
	for f := range changed {
		list = append(list, f)
	}
	sort.Strings(list)
	return fmt.Errorf("%w: %v", errLocalChanges, list)
}

// kptfileDiffers compares the two Kptfiles without their upstream
// sections and with origin's name taken as local's; an origin without a
// Kptfile matches only the default one.
func kptfileDiffers(localPath, originPath string) (bool, error) {
	local, err := kptfileutil.ReadKptfile(filesys.FileSystemOrOnDisk{}, localPath)
	if err != nil {
		return false, err
	}
	local.Upstream, local.UpstreamLock = nil, nil
	if !exists(filepath.Join(originPath, kptpkg.KptfileName)) {
		equal, err := kptfileutil.Equal(local, kptfileutil.DefaultKptfile(filepath.Base(localPath)))
		return !equal, err
	}
	origin, err := kptfileutil.ReadKptfile(filesys.FileSystemOrOnDisk{}, originPath)
	if err != nil {
		return false, err
	}
	origin.Name = local.Name
	equal, err := kptfileutil.Equal(local, origin)
	return !equal, err
}

// replacePackage is force-delete-replace (kpt's ReplaceUpdater): the
// Kptfile's upstream is updated, then every local subpackage's content is
// deleted and copied afresh from the updated package (or the subpackage
// deleted when the update has none).
func replacePackage(localPath, updatedPath, originPath string, isRoot bool) error {
	if err := kptfileutil.UpdateKptfile(localPath, updatedPath, originPath, true); err != nil {
		return err
	}
	subs, err := subpackagesOf(matchLocal, localPath, updatedPath)
	if err != nil {
		return err
	}
	for _, sub := range append([]string{"."}, subs...) {
		rootPkg := sub == "." && isRoot
		local, updated := filepath.Join(localPath, sub), filepath.Join(updatedPath, sub)
		if err := removePackageContent(local, !rootPkg); err != nil {
			return err
		}
		if _, err := os.Stat(updated); errors.Is(err, fs.ErrNotExist) {
			if err := os.RemoveAll(local); err != nil {
				return err
			}
			continue
		} else if err != nil {
			return err
		}
		if err := copyPackage(updated, local, !rootPkg, matchNone); err != nil {
			return err
		}
	}
	return nil
}

// copyMerge copies the updated package over the local one and deletes
// what the update deleted (kpt's CopyMergeUpdater).
func copyMerge(localPath, updatedPath, originPath string, isRoot bool) error {
	if err := kptfileutil.UpdateKptfile(localPath, updatedPath, originPath, true); err != nil {
		return err
	}
	if err := copyPackage(updatedPath, localPath, isRoot, matchAll); err != nil {
		return err
	}
	return removeStale(originPath, updatedPath, localPath)
}

// packageDiff lists the package files (subpackages aside) that one of the
// two packages lacks or that differ: Kptfiles compared without their
// upstream sections, other files as KRM re-encoded without the
// blueprint attribution annotation (byte for byte when not KRM), as
// kpt's diff.PkgDiff.
func packageDiff(a, b string) (map[string]bool, error) {
	as, err := packageFiles(a)
	if err != nil {
		return nil, err
	}
	bs, err := packageFiles(b)
	if err != nil {
		return nil, err
	}
	diff := map[string]bool{}
	for f := range as {
		if !bs[f] {
			diff[f] = true
		}
	}
	for f := range bs {
		if !as[f] {
			diff[f] = true
		}
	}
	for f := range as {
		if !bs[f] {
			continue
		}
		fi, err := os.Stat(filepath.Join(a, f))
		if err != nil {
			return nil, err
		}
		if fi.IsDir() {
			continue
		}
		var equal bool
		if filepath.Base(f) == kptpkg.KptfileName {
			equal, err = kptfilesEqualIgnoringUpstream(filepath.Join(a, filepath.Dir(f)), filepath.Join(b, filepath.Dir(f)))
		} else {
			equal, err = filesEqualAsKRM(filepath.Join(a, f), filepath.Join(b, f))
		}
		if err != nil {
			return nil, err
		}
		if !equal {
			diff[f] = true
		}
	}
	return diff, nil
}

func packageFiles(root string) (map[string]bool, error) {
	files := map[string]bool{}
	err := walkPackage(root, func(p string, _ fs.FileInfo) error {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files[rel] = true
		return nil
	})
	return files, err
}

func kptfilesEqualIgnoringUpstream(a, b string) (bool, error) {
	var enc [2][]byte
	for i, dir := range []string{a, b} {
		kf, err := kptfileutil.ReadKptfile(filesys.FileSystemOrOnDisk{}, dir)
		if err != nil {
			return false, err
		}
		kf.Upstream, kf.UpstreamLock = &kptfilev1.Upstream{}, &kptfilev1.UpstreamLock{}
		if enc[i], err = yaml.Marshal(kf); err != nil {
			return false, err
		}
	}
	return bytes.Equal(enc[0], enc[1]), nil
}

func filesEqualAsKRM(a, b string) (bool, error) {
	ab, err := os.ReadFile(a)
	if err != nil {
		return false, err
	}
	bb, err := os.ReadFile(b)
	if err != nil {
		return false, err
	}
	ae, aerr := withoutBlueprintAnnotation(ab)
	be, berr := withoutBlueprintAnnotation(bb)
	if aerr != nil || berr != nil {
		return bytes.Equal(ab, bb), nil
	}
	return ae == be, nil
}

func withoutBlueprintAnnotation(b []byte) (string, error) {
	var out bytes.Buffer
	err := kio.Pipeline{
		Inputs:  []kio.Reader{&kio.ByteReader{Reader: bytes.NewReader(b)}},
		Filters: []kio.Filter{kio.FilterAll(yaml.AnnotationClearer{Key: kptpkg.CNRMBlueprintAnnotation})},
		Outputs: []kio.Writer{kio.ByteWriter{Writer: &out}},
	}.Execute()
	return out.String(), err
}
