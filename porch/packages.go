package porch

import (
	"path"
	"sort"
	"strings"
)

// kptfile is the file that makes a directory a kpt package.
const kptfile = "Kptfile"

// PackagePath is the name of the package at repository directory dir
// (its path under the repository's package directory root), which its
// tags and branches carry.
func PackagePath(root, dir string) string {
	root = strings.Trim(root, "/")
	if root == "" {
		return dir
	}
	return strings.TrimPrefix(strings.TrimPrefix(dir, root), "/")
}

// PackageDir is the repository directory of package name under root.
func PackageDir(root, name string) string {
	return path.Join(strings.Trim(root, "/"), name)
}

// PackagesIn lists the package directories of a repository tree under
// root, sorted: directories holding a Kptfile and not nested in another
// package (a subpackage belongs to its parent). A Kptfile at the
// repository's root is not a package of it.
func PackagesIn(root string, files map[string][]byte) []string {
	root = strings.Trim(root, "/")
	var dirs []string
	for p := range files {
		if path.Base(p) != kptfile {
			continue
		}
		d := path.Dir(p)
		if d == "." {
			d = ""
		}
		if d == "" || (root != "" && d != root && !strings.HasPrefix(d, root+"/")) {
			continue
		}
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var top []string
	for _, d := range dirs {
		// Not only the previous package: "a-b" sorts between "a" and
		// "a/c", so a subpackage's parent may be any earlier one.
		if !nestedIn(top, d) {
			top = append(top, d)
		}
	}
	return top
}

// nestedIn reports whether dir lies under one of the package directories.
func nestedIn(pkgs []string, dir string) bool {
	for _, p := range pkgs {
		if strings.HasPrefix(dir, p+"/") {
			return true
		}
	}
	return false
}

// PackageOf returns the package directory among pkgs holding file, or "".
func PackageOf(pkgs []string, file string) string {
	for _, p := range pkgs {
		if strings.HasPrefix(file, p+"/") {
			return p
		}
	}
	return ""
}
