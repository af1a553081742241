// Package archive unpacks package archives (gzip tar, zip) into memory
// safely and fetches them over HTTP. Archives come from outside: every entry
// name is checked to stay inside the package, links pointing out are
// refused, and the total unpacked size and file count are capped, so a
// hostile or broken archive is an error that names the entry, never a file
// written outside the package or a filled disk.
package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Default limits: generous for configuration packages, small enough that a
// decompression bomb is stopped long before it hurts.
const (
	DefaultMaxBytes = 256 << 20
	DefaultMaxFiles = 10_000
)

// Limits caps what one archive may unpack to. Zero fields take the defaults.
type Limits struct {
	// MaxBytes is the most bytes all files together may hold, unpacked
	// (and the most bytes an archive download may be).
	MaxBytes int64
	// MaxFiles is the most files (regular files and links) an archive may hold.
	MaxFiles int
}

// withDefaults fills zero fields.
func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	return l
}

// ErrUnsafe marks an archive refused for safety: an entry escaping the
// package, a link pointing out, an unsupported entry type.
var ErrUnsafe = errors.New("unsafe archive")

// ErrTooLarge marks an archive over its limits.
var ErrTooLarge = errors.New("archive over limits")

// Files is a package's files keyed by slash-separated relative path.
type Files = map[string][]byte

// unpacker accumulates entries under the limits.
type unpacker struct {
	limits Limits
	files  Files
	links  map[string]string // link path → target, resolved at the end
	total  int64
	count  int
}

func newUnpacker(l Limits) *unpacker {
	return &unpacker{limits: l.withDefaults(), files: Files{}, links: map[string]string{}}
}

// entryName checks and normalizes an entry's name: relative, no "..", no
// backslashes or NULs. It returns "" for the archive root itself.
func entryName(name string) (string, error) {
	if strings.ContainsAny(name, "\\\x00") {
		return "", fmt.Errorf("%w: entry %q: backslashes and NUL are not allowed in names", ErrUnsafe, name)
	}
	if strings.HasPrefix(name, "/") || (len(name) > 1 && name[1] == ':') {
		return "", fmt.Errorf("%w: entry %q has an absolute path: it would escape the package directory", ErrUnsafe, name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", fmt.Errorf("%w: entry %q contains \"..\": it would escape the package directory", ErrUnsafe, name)
		}
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", nil
	}
	return clean, nil
}

// countEntry charges one file against the file-count limit.
func (u *unpacker) countEntry(name string) error {
	u.count++
	if u.count > u.limits.MaxFiles {
		return fmt.Errorf("%w: more than %d files (at %q); raise the file limit if the package is really this big", ErrTooLarge, u.limits.MaxFiles, name)
	}
	return nil
}

// addFile reads a regular file's content from r (never trusting a declared
// size) and charges it against the byte limit.
func (u *unpacker) addFile(name string, r io.Reader) error {
	if err := u.countEntry(name); err != nil {
		return err
	}
	if _, dup := u.files[name]; dup {
		return fmt.Errorf("%w: entry %q appears twice", ErrUnsafe, name)
	}
	remaining := u.limits.MaxBytes - u.total
	b, err := io.ReadAll(io.LimitReader(r, remaining+1))
	if err != nil {
		return fmt.Errorf("reading entry %q: %w", name, err)
	}
	if int64(len(b)) > remaining {
		return fmt.Errorf("%w: files unpack to more than %d bytes (at %q); raise the size limit if the package is really this big", ErrTooLarge, u.limits.MaxBytes, name)
	}
	u.total += int64(len(b))
	u.files[name] = b
	return nil
}

// addLink records a symbolic or hard link; target is relative to the
// link's directory for symlinks (hard links name archive paths: pass them
// rooted with "/").
func (u *unpacker) addLink(name, target string, hard bool) error {
	if err := u.countEntry(name); err != nil {
		return err
	}
	var resolved string
	switch {
	case hard:
		t, err := entryName(strings.TrimPrefix(target, "./"))
		if err != nil || t == "" {
			return fmt.Errorf("%w: hard link %q points to %q, outside the package", ErrUnsafe, name, target)
		}
		resolved = t
	case strings.HasPrefix(target, "/"):
		return fmt.Errorf("%w: symlink %q points to the absolute path %q, outside the package", ErrUnsafe, name, target)
	default:
		joined := path.Join(path.Dir(name), target)
		if joined == ".." || strings.HasPrefix(joined, "../") {
			return fmt.Errorf("%w: symlink %q points to %q, outside the package", ErrUnsafe, name, target)
		}
		resolved = joined
	}
	u.links[name] = resolved
	return nil
}

// finish resolves links to regular files inside the archive: their
// content is copied (kpt packages hold no links), links to directories or
// to nothing are dropped, as kpt drops symlinks when it copies a package.
func (u *unpacker) finish() (Files, error) {
	names := make([]string, 0, len(u.links))
	for n := range u.links {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		target := u.links[n]
		for hops := 0; hops < 40; hops++ {
			next, isLink := u.links[target]
			if !isLink {
				break
			}
			target = next
		}
		b, ok := u.files[target]
		if !ok {
			continue
		}
		if _, dup := u.files[n]; dup {
			return nil, fmt.Errorf("%w: entry %q appears twice", ErrUnsafe, n)
		}
		u.total += int64(len(b))
		if u.total > u.limits.MaxBytes {
			return nil, fmt.Errorf("%w: files unpack to more than %d bytes (at link %q)", ErrTooLarge, u.limits.MaxBytes, n)
		}
		u.files[n] = b
	}
	return u.files, nil
}

// Tar unpacks an uncompressed tar stream. OCI whiteouts (".wh.NAME")
// delete a file an earlier layer added when layers are applied in order
// with Layers; in a single archive they are refused.
func Tar(r io.Reader, limits Limits) (Files, error) {
	u := newUnpacker(limits)
	if err := u.tar(r, false); err != nil {
		return nil, err
	}
	return u.finish()
}

// TarGz unpacks a gzip-compressed tar stream.
func TarGz(r io.Reader, limits Limits) (Files, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("reading gzip stream: %w: expected a .tar.gz archive", err)
	}
	defer zr.Close()
	return Tar(zr, limits)
}

func (u *unpacker) tar(r io.Reader, whiteouts bool) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading tar archive: %w", err)
		}
		name, err := entryName(hdr.Name)
		if err != nil {
			return err
		}
		if name == "" {
			continue
		}
		if base := path.Base(name); strings.HasPrefix(base, ".wh.") {
			if !whiteouts {
				return fmt.Errorf("%w: entry %q is an OCI whiteout, not a package file", ErrUnsafe, name)
			}
			u.whiteout(name)
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg, tar.TypeRegA:
			if whiteouts {
				delete(u.files, name) // a later layer replaces the file
			}
			if err := u.addFile(name, tr); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := u.addLink(name, hdr.Linkname, false); err != nil {
				return err
			}
		case tar.TypeLink:
			if err := u.addLink(name, hdr.Linkname, true); err != nil {
				return err
			}
		case tar.TypeXGlobalHeader:
		default:
			return fmt.Errorf("%w: entry %q has type %q (device, FIFO or other special file); a package holds only files", ErrUnsafe, name, string(hdr.Typeflag))
		}
	}
}

// whiteout applies an OCI whiteout entry: ".wh.NAME" removes NAME (and
// what is below it), ".wh..wh..opq" empties its directory.
func (u *unpacker) whiteout(name string) {
	dir, base := path.Dir(name), path.Base(name)
	gone := path.Join(dir, strings.TrimPrefix(base, ".wh."))
	if base == ".wh..wh..opq" {
		gone = dir
	}
	for p := range u.files {
		if gone == "." || p == gone || strings.HasPrefix(p, gone+"/") {
			delete(u.files, p)
		}
	}
}

// Zip unpacks a zip archive held in memory.
func Zip(b []byte, limits Limits) (Files, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("reading zip archive: %w", err)
	}
	u := newUnpacker(limits)
	for _, f := range zr.File {
		name, err := entryName(f.Name)
		if err != nil {
			return nil, err
		}
		if name == "" {
			continue
		}
		mode := f.Mode()
		switch {
		case mode.IsDir():
		case mode.IsRegular():
			if err := u.zipFile(name, f); err != nil {
				return nil, err
			}
		case mode&fs.ModeSymlink != 0:
			rc, err := f.Open()
			if err != nil {
				return nil, fmt.Errorf("reading zip entry %q: %w", name, err)
			}
			target, err := io.ReadAll(io.LimitReader(rc, 4096))
			rc.Close()
			if err != nil {
				return nil, fmt.Errorf("reading zip entry %q: %w", name, err)
			}
			if err := u.addLink(name, string(target), false); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%w: entry %q has mode %v; a package holds only files", ErrUnsafe, name, mode)
		}
	}
	return u.finish()
}

func (u *unpacker) zipFile(name string, f *zip.File) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("reading zip entry %q: %w", name, err)
	}
	defer rc.Close()
	return u.addFile(name, rc)
}

// trailingMax is how much a layer may hold after its tar end marker
// (writers pad to their record size, 10 KiB for most).
const trailingMax = 1 << 20

// Layers applies tar layers in order, as an OCI image's file system is
// built: a later layer's file replaces an earlier one, and a ".wh.NAME"
// whiteout removes NAME. Limits apply to the layers together.
func Layers(limits Limits, layers ...func() (io.ReadCloser, error)) (Files, error) {
	u := newUnpacker(limits)
	for i, open := range layers {
		rc, err := open()
		if err != nil {
			return nil, fmt.Errorf("opening layer %d: %w", i, err)
		}
		err = u.tar(rc, true)
		if err == nil {
			// Read to the end, so a verifying reader checks the layer's
			// digest; tar stops at its end marker, before any padding.
			var n int64
			n, err = io.Copy(io.Discard, io.LimitReader(rc, trailingMax+1))
			if err == nil && n > trailingMax {
				err = fmt.Errorf("%w: more than %d bytes after the tar end marker", ErrUnsafe, trailingMax)
			}
		}
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return u.finish()
}

// StripSingleRoot removes a single top-level directory that holds every
// file when the archive's root has no files of its own (release tarballs
// wrap their content in name-version/), so package paths are relative to
// the content. Anything else is returned as is.
func StripSingleRoot(files Files) Files {
	top := ""
	for p := range files {
		dir, _, nested := strings.Cut(p, "/")
		if !nested || (top != "" && dir != top) {
			return files
		}
		top = dir
	}
	if top == "" {
		return files
	}
	out := make(Files, len(files))
	for p, b := range files {
		out[strings.TrimPrefix(p, top+"/")] = b
	}
	return out
}

// Sub returns the files under dir ("/" or "" for all), re-rooted, and
// whether dir exists.
func Sub(files Files, dir string) (Files, bool) {
	d := strings.Trim(path.Clean("/"+dir), "/")
	if d == "" {
		return files, len(files) > 0
	}
	out := Files{}
	for p, b := range files {
		if rest, ok := strings.CutPrefix(p, d+"/"); ok {
			out[rest] = b
		}
	}
	return out, len(out) > 0
}

// Listing names up to n top-level entries of files, for messages about
// what an archive holds instead of what was expected.
func Listing(files Files, n int) string {
	seen := map[string]bool{}
	var tops []string
	for p := range files {
		top, _, nested := strings.Cut(p, "/")
		if nested {
			top += "/"
		}
		if !seen[top] {
			seen[top] = true
			tops = append(tops, top)
		}
	}
	sort.Strings(tops)
	if len(tops) == 0 {
		return "nothing"
	}
	if len(tops) > n {
		return strings.Join(tops[:n], ", ") + fmt.Sprintf(" and %d more", len(tops)-n)
	}
	return strings.Join(tops, ", ")
}
