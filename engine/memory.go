package engine

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// The operations on packages held in memory, for callers whose packages
// live in git objects or forge API responses rather than in a directory
// (Porch drafts, variants). kpt's update strategies and Kptfile merge work
// on directories, so the engine stages the package in a temporary
// directory it removes; callers never round-trip through disk themselves.

// GetTree is Get into memory: the package fetched from opts' upstream,
// named name (its Kptfile's metadata.name and, with ForDeployment, its
// package context), with the files Get would write.
func GetTree(ctx context.Context, f Fetcher, name string, opts GetOptions) (kptpkg.Tree, *GetResult, error) {
	if err := checkName(name); err != nil {
		return nil, nil, fmt.Errorf("getting a package into memory: %w", err)
	}
	stage, err := os.MkdirTemp("", "kptbot-get-")
	if err != nil {
		return nil, nil, fmt.Errorf("creating staging directory: %w", err)
	}
	defer os.RemoveAll(stage)
	res, err := getInto(ctx, f, stage, name, opts)
	if err != nil {
		return nil, nil, err
	}
	t, err := kptpkg.ReadTree(stage)
	if err != nil {
		return nil, nil, err
	}
	return t, res, nil
}

// UpdateTree is Update on a package held in memory: local is the package's
// files (Kptfile at its root) and the result is the merged package; local
// is not changed. name names the package in messages, where Update names
// its directory.
func UpdateTree(ctx context.Context, f Fetcher, name string, local kptpkg.Tree, opts UpdateOptions) (kptpkg.Tree, *UpdateResult, error) {
	b, ok := local[kptpkg.KptfileName]
	if !ok {
		return nil, nil, fmt.Errorf("updating %s: no %s at the package's root: not a kpt package", name, kptpkg.KptfileName)
	}
	kf, err := kptpkg.DecodeKptfile(path.Join(name, kptpkg.KptfileName), b)
	if err != nil {
		return nil, nil, err
	}
	return updateFiles(ctx, f, name, kf, local, opts)
}

// InitTree is Init into memory: the files of a new package named name.
func InitTree(name string, opts InitOptions) (kptpkg.Tree, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("creating a package in memory: %w", err)
	}
	stage, err := os.MkdirTemp("", "kptbot-init-")
	if err != nil {
		return nil, fmt.Errorf("creating staging directory: %w", err)
	}
	defer os.RemoveAll(stage)
	dir := filepath.Join(stage, name)
	if _, err := Init(dir, opts); err != nil {
		return nil, err
	}
	return kptpkg.ReadTree(dir)
}

// checkName accepts a package name that can be a directory's base name.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || name != path.Base(name) || name != filepath.Base(name) {
		return fmt.Errorf("package name %q must be one path element", name)
	}
	return nil
}
