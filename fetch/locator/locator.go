// Package locator parses and formats the upstream references kptbot
// accepts beyond git: OCI artifacts (oci://REGISTRY/REPO[//PKG][:TAG|@DIGEST])
// and HTTP archives (https://HOST/PATH.tar.gz[//PKG][@VERSION][#sha256=HEX]).
// It is pure string handling with no network and no heavy dependencies, so
// the config validator, the engine (which records these references in the
// Kptfile) and the fetchers all agree on one grammar.
package locator

import (
	"fmt"
	"net"
	"path"
	"regexp"
	"strings"
	"sync"
)

// Store kinds: where a package's upstream lives. They are the storeID
// values recorded in a generic Kptfile upstream.
const (
	Git  = "git"
	OCI  = "oci"
	HTTP = "http"
)

// VersionPlaceholder is replaced by the version in an archive URL template,
// so that an HTTP upstream can follow versions (https://h/bp-{version}.tgz).
const VersionPlaceholder = "{version}"

// Latest is the version that means "the highest version tag".
const Latest = "latest"

// Ref is a parsed upstream reference, with the same meaning as a git
// reference's parts: Repo names the store (oci://REGISTRY/REPO, or the
// archive URL with any #sha256= pin), Dir the package inside it ("/" for
// the root) and Version the requested tag, digest or template version.
type Ref struct {
	Repo    string
	Dir     string
	Version string
}

// archiveSuffixes are the archive formats an HTTP upstream may use.
var archiveSuffixes = []string{".tar.gz", ".tgz", ".zip"}

// Store returns the store kind of an upstream repository or reference:
// OCI for oci://, HTTP for an http(s) URL of an archive, else Git.
func Store(repo string) string {
	switch {
	case strings.HasPrefix(repo, "oci://"):
		return OCI
	case (strings.HasPrefix(repo, "https://") || strings.HasPrefix(repo, "http://")) && archiveEnd(repo) > 0:
		return HTTP
	}
	return Git
}

// Parse parses s when it is an OCI or HTTP-archive reference; ok is false
// for anything else (a git reference).
func Parse(s string) (ref Ref, ok bool, err error) {
	switch Store(s) {
	case OCI:
		ref, err = ParseOCI(s)
		return ref, true, err
	case HTTP:
		ref, err = ParseArchive(s)
		return ref, true, err
	}
	return Ref{}, false, nil
}

// The OCI reference patterns are compiled on first use: compiled at
// start-up they cost every CLI call about a millisecond.
var (
	ociComponent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`) })
	ociTag       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`) })
	ociHost      = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]+)?$`)
	})
	hexDigest = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })
)

// IsDigest reports whether s is a sha256 digest ("sha256:" and 64 lower-case
// hex digits), the form every lock records.
func IsDigest(s string) bool { return hexDigest().MatchString(s) }

const ociForm = "oci://REGISTRY/REPO[//PKG_PATH][:TAG|@sha256:DIGEST]"

// ParseOCI parses oci://REGISTRY/REPO[//PKG_PATH][:TAG|@sha256:DIGEST].
// PKG_PATH names the package's own repository below REGISTRY/REPO, as
// Porch's OCI repositories lay packages out (one image repository per
// package, one tag per revision).
func ParseOCI(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(s, "oci://")
	if !ok || rest == "" {
		return Ref{}, fmt.Errorf("OCI reference %q: expected %s", s, ociForm)
	}
	version := ""
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		version = rest[at+1:]
		rest = rest[:at]
		if !IsDigest(version) {
			return Ref{}, fmt.Errorf("OCI reference %q: %q after \"@\" is not a digest (sha256: and 64 hex digits); name a tag with \":TAG\"", s, version)
		}
	} else if slash, colon := strings.LastIndex(rest, "/"), strings.LastIndex(rest, ":"); colon > slash && slash >= 0 {
		version = rest[colon+1:]
		rest = rest[:colon]
		if !ociTag().MatchString(version) {
			return Ref{}, fmt.Errorf("OCI reference %q: tag %q is not a valid tag (letters, digits, _ . -, at most 128)", s, version)
		}
	}
	repo, pkg, _ := strings.Cut(rest, "//")
	host, name, found := strings.Cut(repo, "/")
	if !found || host == "" || name == "" {
		return Ref{}, fmt.Errorf("OCI reference %q: expected %s: no repository after the registry %q", s, ociForm, host)
	}
	if !ociHost().MatchString(host) {
		return Ref{}, fmt.Errorf("OCI reference %q: %q is not a registry host[:port]", s, host)
	}
	if err := checkOCIPath(name); err != nil {
		return Ref{}, fmt.Errorf("OCI reference %q: repository %q: %w", s, name, err)
	}
	pkg = strings.Trim(pkg, "/")
	if pkg != "" {
		if err := checkOCIPath(pkg); err != nil {
			return Ref{}, fmt.Errorf("OCI reference %q: package path %q: %w", s, pkg, err)
		}
	}
	return Ref{Repo: "oci://" + repo, Dir: "/" + pkg, Version: version}, nil
}

// CheckOCIPackage checks that pkg can name a package's image repository
// below an OCI repository (lower-case path components).
func CheckOCIPackage(pkg string) error {
	pkg = strings.Trim(pkg, "/")
	if pkg == "" {
		return nil
	}
	return checkOCIPath(pkg)
}

func checkOCIPath(p string) error {
	for _, c := range strings.Split(p, "/") {
		if !ociComponent().MatchString(c) {
			return fmt.Errorf("path component %q must be lower-case letters and digits separated by '.', '_', '__' or '-'", c)
		}
	}
	return nil
}

// ImageName is the image repository (REGISTRY/REPO/PKG, no scheme) of the
// package at dir in the OCI repository repo.
func ImageName(repo, dir string) string {
	name := strings.TrimPrefix(repo, "oci://")
	if d := strings.Trim(path.Clean("/"+dir), "/"); d != "" {
		name += "/" + d
	}
	return name
}

const archiveForm = "https://HOST/PATH.tar.gz|.tgz|.zip[//PKG_PATH][@VERSION][#sha256=HEX]"

// archiveEnd returns the index just past the archive suffix of an http(s)
// URL's path (followed by the end, a query, "//" or "@"), or -1.
func archiveEnd(s string) int {
	start := strings.Index(s, "://")
	if start < 0 {
		return -1
	}
	start += len("://")
	if frag := strings.Index(s, "#"); frag >= 0 {
		s = s[:frag]
	}
	best := -1
	for _, suf := range archiveSuffixes {
		for i := start; ; {
			j := strings.Index(s[i:], suf)
			if j < 0 {
				break
			}
			end := i + j + len(suf)
			rest := s[end:]
			if rest == "" || strings.HasPrefix(rest, "?") || strings.HasPrefix(rest, "//") || strings.HasPrefix(rest, "@") {
				if best < 0 || end < best {
					best = end
				}
				break
			}
			i = end
		}
	}
	return best
}

// ParseArchive parses https://HOST/PATH.tar.gz[//PKG_PATH][@VERSION][#sha256=HEX]
// (also .tgz and .zip, with an optional ?query after the suffix). The
// #sha256= pin stays on Repo, so every later fetch of the reference
// checks it. A {version} placeholder in the URL is filled from VERSION.
func ParseArchive(s string) (Ref, error) {
	if !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "http://") {
		return Ref{}, fmt.Errorf("archive reference %q: expected %s", s, archiveForm)
	}
	body, frag, hasFrag := strings.Cut(s, "#")
	pin := ""
	if hasFrag {
		hex, ok := strings.CutPrefix(frag, "sha256=")
		hex = strings.ToLower(hex)
		if !ok || !IsDigest("sha256:"+hex) {
			return Ref{}, fmt.Errorf("archive reference %q: fragment %q: expected #sha256= and 64 hex digits", s, "#"+frag)
		}
		pin = "sha256:" + hex
	}
	end := archiveEnd(body)
	if end < 0 {
		return Ref{}, fmt.Errorf("archive reference %q: expected %s", s, archiveForm)
	}
	url, rest := body[:end], body[end:]
	_, afterScheme, _ := strings.Cut(url, "://")
	if host, _, hasPath := strings.Cut(afterScheme, "/"); host == "" || !hasPath {
		return Ref{}, fmt.Errorf("archive reference %q: expected %s: no host and path", s, archiveForm)
	}
	if strings.HasPrefix(rest, "?") {
		q := rest
		if i := strings.Index(rest, "//"); i >= 0 {
			q = rest[:i]
		}
		if i := strings.Index(q, "@"); i >= 0 {
			q = q[:i]
		}
		url += q
		rest = rest[len(q):]
	}
	pkgPart, version, hasVersion := strings.Cut(rest, "@")
	if hasVersion && version == "" {
		return Ref{}, fmt.Errorf("archive reference %q: empty version after \"@\"", s)
	}
	if pkgPart != "" && !strings.HasPrefix(pkgPart, "//") {
		return Ref{}, fmt.Errorf("archive reference %q: unexpected %q after the archive name: expected %s", s, pkgPart, archiveForm)
	}
	pkg := strings.Trim(strings.TrimPrefix(pkgPart, "//"), "/")
	if pkg == "." {
		pkg = ""
	}
	if pkg != "" {
		clean := path.Clean(pkg)
		if clean != pkg || strings.HasPrefix(clean, "../") || clean == ".." {
			return Ref{}, fmt.Errorf("archive reference %q: package path %q must be a clean relative path inside the archive", s, pkg)
		}
	}
	templated := strings.Contains(url, VersionPlaceholder)
	switch {
	case templated && pin != "":
		return Ref{}, fmt.Errorf("archive reference %q: a #sha256= pin names one archive and cannot be combined with a %s template", s, VersionPlaceholder)
	case hasVersion && !templated:
		return Ref{}, fmt.Errorf("archive reference %q: version %q given but the URL has no %s placeholder: an archive URL names one file", s, version, VersionPlaceholder)
	}
	repo := url
	if pin != "" {
		repo = WithPin(url, pin)
	}
	return Ref{Repo: repo, Dir: "/" + pkg, Version: version}, nil
}

// SplitPin splits an archive URL into the URL proper and the digest its
// #sha256= fragment pins ("" when none).
func SplitPin(repo string) (url, digest string) {
	u, frag, ok := strings.Cut(repo, "#sha256=")
	if !ok {
		return repo, ""
	}
	return u, "sha256:" + strings.ToLower(frag)
}

// WithPin returns url pinned to digest (sha256:HEX) with a #sha256= fragment.
func WithPin(url, digest string) string {
	u, _ := SplitPin(url)
	return u + "#sha256=" + strings.TrimPrefix(digest, "sha256:")
}

// IsTemplate reports whether an archive URL has a {version} placeholder.
func IsTemplate(url string) bool { return strings.Contains(url, VersionPlaceholder) }

// Expand fills an archive URL template's {version} placeholder.
func Expand(url, version string) string {
	return strings.ReplaceAll(url, VersionPlaceholder, version)
}

// ResourceID formats a store and package as one string, the resourceID a
// generic Kptfile upstream records: oci://REGISTRY/REPO//PKG, or the
// archive URL with //PKG before any #sha256= pin. Parse reads it back.
func ResourceID(repo, dir string) string {
	pkg := strings.Trim(path.Clean("/"+dir), "/")
	if Store(repo) == HTTP {
		url, pin := SplitPin(repo)
		if pkg != "" {
			url += "//" + pkg
		}
		if pin != "" {
			url = WithPin(url, pin)
		}
		return url
	}
	if pkg == "" {
		return repo
	}
	return repo + "//" + pkg
}

// WithVersion appends version to a resource ID in its store's syntax
// (":TAG" or "@sha256:..." for OCI, "@VERSION" for archives).
func WithVersion(id, version string) string {
	if version == "" {
		return id
	}
	if Store(id) == OCI && !IsDigest(version) {
		return id + ":" + version
	}
	if Store(id) == HTTP {
		url, pin := SplitPin(id)
		if pin != "" {
			return id
		}
		return url + "@" + version
	}
	return id + "@" + version
}

// DefaultName is the directory name `pkg get` gives a package fetched from
// ref when no destination is named: the package path's last element, else
// the repository's (for an archive, its file name without the suffix).
func DefaultName(ref Ref) string {
	if d := strings.Trim(ref.Dir, "/"); d != "" {
		return path.Base(d)
	}
	if Store(ref.Repo) == HTTP {
		url, _ := SplitPin(ref.Repo)
		url = Expand(url, ref.Version)
		if i := strings.Index(url, "?"); i >= 0 {
			url = url[:i]
		}
		base := path.Base(url)
		for _, suf := range archiveSuffixes {
			if b, ok := strings.CutSuffix(base, suf); ok {
				return b
			}
		}
		return base
	}
	return path.Base(strings.TrimPrefix(ref.Repo, "oci://"))
}

// PlainHTTPAllowed reports whether plain (unencrypted) HTTP may be used
// for host[:port]: only for loopback (127.0.0.0/8, ::1, localhost) or a
// host the user listed explicitly (with or without its port), because
// anything else lets the network tamper with what is fetched.
func PlainHTTPAllowed(hostport string, insecure []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, h := range insecure {
		if strings.EqualFold(h, hostport) || strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// HostIn reports whether host[:port] is one of hosts (each with or
// without a port); it scopes credentials to the hosts they were given for.
func HostIn(hostport string, hosts []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if h != "" && (strings.EqualFold(h, hostport) || strings.EqualFold(h, host)) {
			return true
		}
	}
	return false
}
