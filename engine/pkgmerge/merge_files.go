package pkgmerge

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/copyutil"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// replaceNonKRMFiles is kpt's rule for files that are not resources:
// locally modified ones stay, the rest follow upstream.
func replaceNonKRMFiles(updatedDir, originalDir, localDir string) error {
	updatedDirs, updatedFiles := nonKRMFiles(updatedDir)
	originalDirs, originalFiles := nonKRMFiles(originalDir)
	localDirs, localFiles := nonKRMFiles(localDir)
	modified := map[string]bool{}
	for f := range localFiles {
		if !originalFiles[f] {
			modified[f] = true
			continue
		}
		a, err1 := os.ReadFile(filepath.Join(originalDir, f))
		b, err2 := os.ReadFile(filepath.Join(localDir, f))
		if err1 != nil || err2 != nil {
			return fmt.Errorf("comparing %s: %v %v", f, err1, err2)
		}
		if !bytes.Equal(a, b) {
			modified[f] = true
			continue
		}
		if !updatedFiles[f] {
			if err := os.Remove(filepath.Join(localDir, f)); err != nil {
				return err
			}
		}
	}
	for d := range updatedDirs {
		if err := os.MkdirAll(filepath.Join(localDir, d), 0o700); err != nil {
			return err
		}
	}
	for f := range updatedFiles {
		if modified[f] {
			continue
		}
		if err := copyutil.SyncFile(filepath.Join(updatedDir, f), filepath.Join(localDir, f)); err != nil {
			return err
		}
	}
	for d := range localDirs {
		if !updatedDirs[d] && originalDirs[d] {
			os.Remove(filepath.Join(localDir, d)) // only if empty, as kpt
		}
	}
	return nil
}

// nonKRMFiles lists the subdirectories and non-resource files of a package
// (not descending into subpackages), as paths starting with "/".
func nonKRMFiles(root string) (dirs, files map[string]bool) {
	dirs, files = map[string]bool{}, map[string]bool{}
	if !exists(root) {
		return dirs, files
	}
	_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel := strings.TrimPrefix(p, root)
		if p != root && (info.Name() == ".git" || strings.Contains(rel, "/.git/")) {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if info.IsDir() {
			if p != root && exists(filepath.Join(p, kptpkg.KptfileName)) {
				return filepath.SkipDir
			}
			if rel != "" {
				dirs[rel] = true
			}
			return nil
		}
		base := filepath.Base(p)
		if base == kptpkg.KptfileName || strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml") {
			return nil
		}
		if rel != "" && !strings.Contains(rel, ".git") {
			files[rel] = true
		}
		return nil
	})
	return dirs, files
}
