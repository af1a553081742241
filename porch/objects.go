package porch

import (
	"path"
	"strings"
)

// PackageName is the name Porch gives a package's Package object:
// repository.(path.)*package, the package's path with dots for slashes
// (Porch's ComposePkgObjName).
func PackageName(repo, pkg string) string {
	return repo + "." + dotted(pkg)
}

// PackageRevisionName is the name Porch gives a PackageRevision object:
// repository.(path.)*package.workspace (Porch's ComposePkgRevObjName), as
// porchctl rpkg get lists it.
func PackageRevisionName(repo, pkg, ws string) string {
	return PackageName(repo, pkg) + "." + ws
}

func dotted(pkg string) string {
	return strings.Trim(strings.ReplaceAll(path.Clean("/"+pkg), "/", "."), ".")
}
