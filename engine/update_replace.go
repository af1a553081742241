package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

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
// file walks below are kpt's pkgutil ones; where kpt's behaviour is odd
// it is kept, and said so.

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

// subpackageMatch selects subpackages as kpt's pkg.SubpackageMatcher.
type subpackageMatch int

const (
	matchNone  subpackageMatch = iota
	matchLocal                 // a Kptfile without upstream
	matchAll
)

// subpackagesOf lists, relative to each root and merged, the subpackages
// at any depth under the roots that match (kpt's FindSubpackagesForPaths
// with recursion: the walk goes on below every subpackage, remote ones
// included), sorted root first.
func subpackagesOf(m subpackageMatch, roots ...string) ([]string, error) {
	seen := map[string]bool{}
	for _, root := range roots {
		subs, err := subpackagesUnder(root, m, true)
		if err != nil {
			return nil, err
		}
		for _, s := range subs {
			seen[s] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	// kpt sorts by filepath.SplitList segments, which are always one:
	// plain lexical order.
	sort.Strings(out)
	return out, nil
}

// subpackagesUnder is kpt's pkg.Subpackages.
func subpackagesUnder(root string, m subpackageMatch, recursive bool) ([]string, error) {
	if m == matchNone || !exists(root) {
		return nil, nil
	}
	var out []string
	err := filepath.Walk(root, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return fmt.Errorf("failed to read package %s: %w", root, err)
		}
		if p == root || !info.IsDir() {
			return nil
		}
		if info.Name() == ".git" {
			return filepath.SkipDir
		}
		if !exists(filepath.Join(p, kptpkg.KptfileName)) {
			return nil
		}
		kf, err := kptfileutil.ReadKptfile(filesys.FileSystemOrOnDisk{}, p)
		if err != nil {
			return fmt.Errorf("reading %s: %w", filepath.Join(p, kptpkg.KptfileName), err)
		}
		if m == matchAll || kf.Upstream == nil {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, rel)
		}
		if !recursive {
			return filepath.SkipDir
		}
		return nil
	})
	return out, err
}

// walkPackage walks src without its .git directories and without its
// subpackages (kpt's pkgutil.WalkPackage). As in kpt, a subpackage is
// excluded by path prefix, so a sibling directory whose name extends a
// subpackage's (sub2 after sub) is excluded with it.
func walkPackage(src string, visit func(p string, info fs.FileInfo) error) error {
	var excluded []string
	return filepath.Walk(src, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p != src && isDotGitPath(strings.TrimPrefix(p, src)) {
			return nil
		}
		for _, dir := range excluded {
			if strings.HasPrefix(p, dir) {
				return nil
			}
		}
		if info.IsDir() && p != src {
			if _, err := os.Stat(filepath.Join(p, kptpkg.KptfileName)); err == nil {
				excluded = append(excluded, p)
				return nil
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return visit(p, info)
	})
}

// isDotGitPath reports whether a path has a .git segment.
func isDotGitPath(p string) bool {
	for _, c := range strings.Split(filepath.ToSlash(filepath.Clean(p)), "/") {
		if c == ".git" {
			return true
		}
	}
	return false
}

// copyPackage copies src's files into dst (kpt's pkgutil.CopyPackage):
// the package's own files (its Kptfile only when copyRootKptfile, and
// never over an existing one), then whole the subpackages m selects.
func copyPackage(src, dst string, copyRootKptfile bool, m subpackageMatch) error {
	subs, err := subpackagesUnder(src, m, true)
	if err != nil {
		return err
	}
	err = walkPackage(src, func(p string, info fs.FileInfo) error {
		rel := strings.TrimPrefix(p, src)
		if rel == "/"+kptpkg.KptfileName && exists(filepath.Join(dst, rel)) {
			return nil
		}
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), info.Mode())
		}
		if p == filepath.Join(src, kptpkg.KptfileName) && !copyRootKptfile {
			return nil
		}
		return copyFile(filepath.Join(src, rel), filepath.Join(dst, rel), info.Mode())
	})
	if err != nil {
		return err
	}
	for _, sub := range subs {
		subSrc := filepath.Join(src, sub)
		err := filepath.Walk(subSrc, func(p string, info fs.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if isDotGitPath(strings.TrimPrefix(p, subSrc)) {
				return nil
			}
			rel := strings.TrimPrefix(p, src)
			if info.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), info.Mode())
			}
			// kpt compares against the root's Kptfile here, which a
			// subpackage's path never is
			if rel == "/"+kptpkg.KptfileName && exists(filepath.Join(dst, rel)) {
				return nil
			}
			return copyFile(filepath.Join(src, rel), filepath.Join(dst, rel), info.Mode())
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string, mode fs.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, mode)
}

// removeStale deletes from dst what the origin had and the update no
// longer has (kpt's pkgutil.RemoveStaleItems), the root Kptfile aside.
func removeStale(origin, updated, dst string) error {
	var dirs []string
	err := filepath.Walk(dst, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p == dst {
			return nil
		}
		rel, err := filepath.Rel(dst, p)
		if err != nil {
			return err
		}
		if rel == kptpkg.KptfileName {
			return nil
		}
		_, uerr := os.Stat(filepath.Join(updated, rel))
		_, oerr := os.Stat(filepath.Join(origin, rel))
		if errors.Is(uerr, fs.ErrNotExist) && oerr == nil {
			if info.IsDir() {
				dirs = append(dirs, p)
				return nil
			}
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if err := os.Remove(d); err != nil {
			return err
		}
	}
	return nil
}

// removePackageContent deletes the package's own files (its Kptfile only
// when removeRootKptfile), then its directories left empty, deepest first
// (kpt's pkgutil.RemovePackageContent).
func removePackageContent(root string, removeRootKptfile bool) error {
	var dirs []string
	err := walkPackage(root, func(p string, info fs.FileInfo) error {
		if info.IsDir() {
			if p != root {
				dirs = append(dirs, p)
			}
			return nil
		}
		if p == filepath.Join(root, kptpkg.KptfileName) && !removeRootKptfile {
			return nil
		}
		return os.Remove(p)
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		empty, err := isEmptyDir(d)
		if err != nil {
			return err
		}
		if empty {
			if err := os.RemoveAll(d); err != nil {
				return err
			}
		}
	}
	return nil
}

func isEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
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
		Filters: []kio.Filter{kio.FilterAll(yaml.AnnotationClearer{Key: cnrmBlueprintAnnotation})},
		Outputs: []kio.Writer{kio.ByteWriter{Writer: &out}},
	}.Execute()
	return out.String(), err
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
