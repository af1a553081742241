package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kptbot/kptbot/engine/kptpkg"
	"github.com/kptbot/kptbot/fetch"
	"github.com/kptbot/kptbot/fetch/locator"
	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"
	"github.com/kptdev/kpt/pkg/kptfile/kptfileutil"
	"github.com/kptdev/kpt/pkg/lib/util/addmergecomment"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Fetcher resolves a version of a package in a repository and returns its
// files; fetch.Client implements it over git.
type Fetcher interface {
	Fetch(ctx context.Context, repo, dir, version string) (map[string][]byte, fetch.Resolved, error)
}

// GetOptions configures Get.
type GetOptions struct {
	// Repo, Dir and Version name the upstream (Dir starts with "/").
	Repo, Dir, Version string
	// Strategy is recorded as upstream.updateStrategy (default resource-merge).
	Strategy kptfilev1.UpdateStrategyType
	// ForDeployment generates package-context.yaml, as `kpt pkg get --for-deployment`.
	ForDeployment bool
}

// GetResult reports what Get fetched.
type GetResult struct {
	// Packages lists each fetched package (root first) with its resolution.
	Packages []FetchedPackage
}

// FetchedPackage is one package fetched from an upstream.
type FetchedPackage struct {
	// Path is the package's path relative to the root package ("." for it).
	Path string `json:"path"`
	// Repo and Dir name the upstream.
	Repo string `json:"repo"`
	Dir  string `json:"dir"`
	// Resolved is the ref and commit the version resolved to (for OCI
	// and HTTP upstreams, the tag or version and the content's digest).
	Resolved fetch.Resolved `json:"resolved"`
	// Store is git, oci or http.
	Store string `json:"store"`
}

// Source names the upstream package as a user would write it
// (REPO/PKG for git, oci://REGISTRY/REPO//PKG, ARCHIVE_URL//PKG).
func (p FetchedPackage) Source() string {
	if p.Store == locator.Git || p.Store == "" {
		return p.Repo + p.Dir
	}
	return locator.ResourceID(p.Repo, p.Dir)
}

// Get creates a new package at dest from an upstream, as `kpt pkg get`:
// the Kptfile is named after dest and records upstream and upstreamLock,
// resources get "# kpt-merge:" identity comments, and remote subpackages
// (Kptfiles with an upstream but no lock) are fetched too. dest must not
// exist; on any error nothing is left behind.
func Get(ctx context.Context, f Fetcher, dest string, opts GetOptions) (*GetResult, error) {
	if _, err := os.Stat(dest); err == nil {
		return nil, fmt.Errorf("destination %s already exists", dest)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("checking destination %s: %w", dest, err)
	}
	parent := filepath.Dir(dest)
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("parent directory %s of the destination does not exist", parent)
	}
	// Build the package beside its destination and rename it into place at
	// the end, so a failure never leaves a half-fetched package.
	stage, err := os.MkdirTemp(parent, ".kptbot-get-")
	if err != nil {
		return nil, fmt.Errorf("creating staging directory: %w", err)
	}
	defer os.RemoveAll(stage)
	res, err := getInto(ctx, f, stage, filepath.Base(dest), opts)
	if err != nil {
		return nil, err
	}
	if err := os.Rename(stage, dest); err != nil {
		return nil, fmt.Errorf("moving fetched package into %s: %w", dest, err)
	}
	if err := os.Chmod(dest, 0o755); err != nil {
		return nil, err
	}
	return res, nil
}

// getInto builds the package Get fetches, named name, in the empty
// directory stage.
func getInto(ctx context.Context, f Fetcher, stage, name string, opts GetOptions) (*GetResult, error) {
	if opts.Strategy == "" {
		opts.Strategy = kptfilev1.ResourceMerge
	}
	if err := checkStrategy(string(opts.Strategy)); err != nil {
		return nil, err
	}
	kf := kptfileutil.DefaultKptfile(name)
	up := kptpkg.Origin{Store: locator.Store(opts.Repo), Repo: opts.Repo, Dir: opts.Dir, Ref: opts.Version}
	if up.Store == locator.Git {
		up.Repo = absLocalRepo(up.Repo)
	}
	if up.Store == locator.OCI && up.Ref == "" {
		up.Ref = locator.Latest // recorded, so updates follow the highest tag
	}
	kptpkg.SetUpstream(kf, up, opts.Strategy)
	if err := kptpkg.WriteKptfile(stage, kf); err != nil {
		return nil, err
	}
	res := &GetResult{}
	if err := fetchPackages(ctx, f, stage, res); err != nil {
		return nil, err
	}
	if err := addMergeComments(stage); err != nil {
		return nil, err
	}
	if opts.ForDeployment {
		if err := dropPackageContexts(stage); err != nil {
			return nil, err
		}
		if err := writePackageContext(stage, name); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// absLocalRepo records a repository given as a relative local path
// (../blueprints.git) by its absolute path, so that a later update run
// from any other directory finds the same repository.
func absLocalRepo(repo string) string {
	if repo == "" || strings.Contains(repo, "://") || filepath.IsAbs(repo) {
		return repo
	}
	for _, p := range []string{repo, repo + ".git"} {
		if _, err := os.Stat(p); err == nil {
			if abs, err := filepath.Abs(repo); err == nil {
				return abs
			}
		}
	}
	return repo
}

func checkStrategy(s string) error {
	switch kptfilev1.UpdateStrategyType(s) {
	case kptfilev1.ResourceMerge, kptfilev1.FastForward, kptfilev1.ForceDeleteReplace, kptfilev1.CopyMerge:
		return nil
	}
	return fmt.Errorf("unknown update strategy %q: expected one of resource-merge, fast-forward, force-delete-replace, copy-merge", s)
}

// fetchPackages walks the package tree under root and fetches every package
// whose Kptfile has an upstream but no upstreamLock, the root included.
func fetchPackages(ctx context.Context, f Fetcher, root string, res *GetResult) error {
	stack := []string{"."}
	for len(stack) > 0 {
		rel := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		dir := filepath.Join(root, rel)
		kf, err := kptpkg.ReadKptfile(dir)
		if err != nil {
			return err
		}
		up, err := kptpkg.UpstreamOf(kf)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(rel, kptpkg.KptfileName), err)
		}
		if up != nil && kf.UpstreamLock == nil {
			fp, err := fetchInto(ctx, f, dir, *up)
			if err != nil {
				if rel == "." {
					return err
				}
				return fmt.Errorf("fetching subpackage %s: %w", rel, err)
			}
			fp.Path = rel
			res.Packages = append(res.Packages, fp)
		}
		subs, err := directSubpackages(dir)
		if err != nil {
			return err
		}
		for i := len(subs) - 1; i >= 0; i-- {
			stack = append(stack, path.Join(rel, subs[i]))
		}
	}
	return nil
}

// fetchInto copies the upstream up into dir, merging the upstream's
// Kptfile into the local one and recording the lock.
func fetchInto(ctx context.Context, f Fetcher, dir string, up kptpkg.Origin) (FetchedPackage, error) {
	files, resolved, err := f.Fetch(ctx, up.Repo, up.Dir, up.Ref)
	if err != nil {
		return FetchedPackage{}, err
	}
	if up.Store != locator.Git {
		if _, ok := files[kptpkg.KptfileName]; !ok {
			return FetchedPackage{}, fmt.Errorf("upstream %s: %w: no Kptfile at the package root", up, fetch.ErrNotPackage)
		}
	}
	src, err := os.MkdirTemp("", "kptbot-upstream-")
	if err != nil {
		return FetchedPackage{}, err
	}
	defer os.RemoveAll(src)
	if err := kptpkg.Tree(files).Write(src); err != nil {
		return FetchedPackage{}, err
	}
	if _, ok := files[kptpkg.KptfileName]; ok {
		if _, err := kptpkg.ReadKptfile(src); err != nil {
			return FetchedPackage{}, fmt.Errorf("upstream %s: %w", up, err)
		}
	}
	for name, b := range files {
		if name == kptpkg.KptfileName {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return FetchedPackage{}, err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return FetchedPackage{}, err
		}
	}
	if err := kptfileutil.UpdateKptfileWithoutOrigin(dir, src, false); err != nil {
		return FetchedPackage{}, fmt.Errorf("merging upstream Kptfile: %w", err)
	}
	local, err := kptpkg.ReadKptfile(dir)
	if err != nil {
		return FetchedPackage{}, err
	}
	// The upstream's Kptfile annotations were merged in; its own generic
	// upstream (if it was fetched from OCI itself) must not leak into ours.
	kptpkg.SetUpstream(local, up, local.Upstream.UpdateStrategy)
	kptpkg.SetLock(local, kptpkg.LockFrom(up, resolved))
	if err := kptpkg.WriteKptfile(dir, local); err != nil {
		return FetchedPackage{}, err
	}
	return FetchedPackage{Repo: up.Repo, Dir: up.Dir, Resolved: resolved, Store: up.Store}, nil
}

// directSubpackages lists the directories directly below dir (at any depth,
// but not inside another subpackage) that hold a Kptfile.
func directSubpackages(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == dir {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(p, kptpkg.KptfileName)); err == nil {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
			return filepath.SkipDir
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// addMergeComments adds kpt's "# kpt-merge: ns/name" comments and
// upstream-identifier annotations to every resource of the package tree,
// as kpt's read-filter-write pass over the whole tree does, a file at a
// time on all CPUs (kpt holds the whole tree's parsed resources).
func addMergeComments(dir string) error {
	r := kio.LocalPackageReader{PackagePath: dir, PreserveSeqIndent: true, WrapBareSeqNode: true, FileSystem: filesys.FileSystemOrOnDisk{}}
	_, err := kptpkg.ReadPackageFiles(r, func(f *kptpkg.PackageFile, parse func() ([]*yaml.RNode, error)) error {
		nodes, err := parse()
		if err != nil || len(nodes) == 0 {
			return err
		}
		if _, err := kio.FilterAll(&addmergecomment.AddMergeComment{}).Filter(nodes); err != nil {
			return err
		}
		for _, n := range nodes {
			if err := kptpkg.Attribute(n, "pkg"); err != nil {
				return err
			}
		}
		return kptpkg.WritePackage(filesys.FileSystemOrOnDisk{}, dir, nodes, nil) // f keeps no nodes
	})
	if err != nil {
		return fmt.Errorf("adding merge comments in %s: %w", dir, err)
	}
	return nil
}

// PackageContextFile is the file `--for-deployment` generates.
const PackageContextFile = "package-context.yaml"

// packageContext is kpt's package-context.yaml for a package called name.
func packageContext(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: kptfile.kpt.dev
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  name: %s
`, yamlScalar(name))
}

// dropPackageContexts removes the package context ConfigMaps (v1
// ConfigMap kptfile.kpt.dev) from every package below root, subpackages
// included, as kpt's --for-deployment does (since v1.0.0-beta.6x, only the
// root package gets a new one); a file left without resources is deleted,
// and files without one keep their bytes.
func dropPackageContexts(root string) error {
	return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(p) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(pkgContextName)) {
			return err
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), PreserveSeqIndent: true, WrapBareSeqNode: true}).Read()
		if err != nil {
			return nil // not KRM: not a package context either
		}
		var kept []*yaml.RNode
		for _, n := range nodes {
			if n.GetApiVersion() == "v1" && n.GetKind() == "ConfigMap" && n.GetName() == pkgContextName {
				continue
			}
			kept = append(kept, n)
		}
		switch {
		case len(kept) == len(nodes):
			return nil
		case len(kept) == 0:
			return os.Remove(p)
		}
		var out bytes.Buffer
		if err := (kio.ByteWriter{Writer: &out}).Write(kept); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		return os.WriteFile(p, out.Bytes(), 0o644)
	})
}

// pkgContextName is the package context ConfigMap's name.
const pkgContextName = "kptfile.kpt.dev"

func writePackageContext(dir, name string) error {
	return os.WriteFile(filepath.Join(dir, PackageContextFile), []byte(packageContext(name)), 0o644)
}

// yamlScalar quotes s if YAML would not read it back as the same string.
func yamlScalar(s string) string {
	if s == "" || strings.ContainsAny(s, ":#{}[],&*!|>'\"%@`") || s == "true" || s == "false" || s == "null" {
		return fmt.Sprintf("%q", s)
	}
	return s
}
