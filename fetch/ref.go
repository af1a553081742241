package fetch

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/kptbot/kptbot/fetch/locator"
)

// Ref is a parsed package reference REPO_URI[.git]/PKG_PATH[@VERSION].
type Ref struct {
	// Repo is the repository URL or path, without a trailing ".git" (as kpt
	// records it in the Kptfile).
	Repo string
	// Dir is the package directory inside the repository, starting with "/".
	Dir string
	// Version is the requested version; empty means the default branch.
	Version string
}

// ParseRef parses a package reference the way `kpt pkg get` does: the
// repository ends at ".git"; what follows is the package path, optionally
// followed by "@VERSION". Local paths and file:// URLs need no ".git": the
// repository is the longest existing prefix that is a git repository
// (found with isRepo, which may be nil for pure parsing of ".git" forms).
// OCI (oci://...) and HTTP-archive (https://....tar.gz) references are
// parsed by package locator, in their own syntax.
func ParseRef(arg string, isRepo func(string) bool) (Ref, error) {
	if strings.TrimSpace(arg) == "" {
		return Ref{}, fmt.Errorf("package reference is empty: expected REPO_URI[.git]/PKG_PATH[@VERSION]")
	}
	if ref, ok, err := locator.Parse(arg); ok {
		return Ref(ref), err
	}
	// The version follows the first "@" after the repository part: after
	// ".git" when present, else after the URL's host (which may hold user
	// info with an "@" of its own).
	start := 0
	if idx := gitSuffixIndex(arg); idx >= 0 {
		start = idx
	} else if i := strings.Index(arg, "://"); i >= 0 {
		start = i + len("://")
		if j := strings.Index(arg[start:], "/"); j >= 0 {
			start += j
		}
	}
	spec, version := arg, ""
	if at := strings.Index(arg[start:], "@"); at >= 0 {
		spec, version = arg[:start+at], arg[start+at+1:]
		if version == "" {
			return Ref{}, fmt.Errorf("package reference %q: empty version after \"@\"", arg)
		}
	}
	version = strings.TrimSuffix(version, "/")
	if idx := gitSuffixIndex(spec); idx >= 0 {
		repo := spec[:idx]
		dir := strings.TrimPrefix(spec[idx+len(".git"):], "/")
		return Ref{Repo: repo, Dir: cleanDir(dir), Version: version}, nil
	}
	if p, ok := localPath(spec); ok && isRepo != nil {
		prefix := ""
		if strings.HasPrefix(spec, "file://") {
			prefix = "file://"
		}
		abs := p
		for cur := filepath.Clean(abs); ; cur = filepath.Dir(cur) {
			if isRepo(cur) {
				rel, err := filepath.Rel(cur, filepath.Clean(abs))
				if err != nil {
					return Ref{}, fmt.Errorf("package reference %q: %w", arg, err)
				}
				return Ref{Repo: prefix + cur, Dir: cleanDir(filepath.ToSlash(rel)), Version: version}, nil
			}
			if cur == filepath.Dir(cur) {
				break
			}
		}
		return Ref{}, fmt.Errorf("package reference %q: no git repository found at %s or any parent directory", arg, p)
	}
	return Ref{}, fmt.Errorf("package reference %q is ambiguous: mark the end of the repository with \".git\", as in https://host/org/repo.git/path/to/pkg@v1", arg)
}

// gitSuffixIndex finds ".git" followed by "/" or the end of the string.
func gitSuffixIndex(s string) int {
	for i := 0; ; {
		j := strings.Index(s[i:], ".git")
		if j < 0 {
			return -1
		}
		k := i + j + len(".git")
		if k == len(s) || s[k] == '/' {
			return i + j
		}
		i = k
	}
}

func cleanDir(dir string) string {
	return path.Clean("/" + dir)
}

// IsLocalRepo reports whether dir is a git repository (bare or with a work
// tree); it is the isRepo argument ParseRef wants for local references.
func IsLocalRepo(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, ".git")); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
		return true
	}
	for _, f := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}
