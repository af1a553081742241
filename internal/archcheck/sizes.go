package archcheck

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxPackageLines is the most non-test lines a package may have: past it
// a package holds more than one thing a newcomer can read at once.
const MaxPackageLines = 2500

// PackageLines returns, per package directory (slash, relative to root),
// the lines of its non-test Go files, as `cat $(ls DIR/*.go | grep -v
// _test.go) | wc -l` counts them (testdata and hidden directories
// skipped).
func PackageLines(root string) (map[string]int, error) {
	out := map[string]int{}
	err := walkSources(root, func(p string) error {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] += bytes.Count(data, []byte("\n"))
		return nil
	})
	return out, err
}

// walkSources calls fn with the path of every non-test Go file of the
// module at root, testdata and hidden directories skipped: the files both
// checks hold to their limits.
func walkSources(root string, fn func(path string) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		return fn(p)
	})
}
