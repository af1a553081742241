package porch

import (
	"fmt"
	"strconv"
	"strings"
)

// Lifecycle is a package revision's stage, with Porch's names.
type Lifecycle string

// Porch's lifecycles.
const (
	Draft            Lifecycle = "Draft"
	Proposed         Lifecycle = "Proposed"
	Published        Lifecycle = "Published"
	DeletionProposed Lifecycle = "DeletionProposed"
)

// Git's ref namespaces and Porch's branch prefixes (short branch names).
const (
	BranchRefPrefix        = "refs/heads/"
	TagRefPrefix           = "refs/tags/"
	DraftsPrefix           = "drafts/"
	ProposedPrefix         = "proposed/"
	DeletionProposedPrefix = "deletionProposed/"
)

// RefInfo is what a ref name says about a package revision.
type RefInfo struct {
	Package   string
	Workspace string // drafts and proposals
	Revision  int    // published and deletion-proposed (0 otherwise)
	Lifecycle Lifecycle
}

// RevisionName is the name of revision n: v<n>.
func RevisionName(n int) string { return "v" + strconv.Itoa(n) }

// ParseRevision parses a revision name v<N> (N ≥ 0, written without sign
// or leading zeros, so that RevisionName gives the same name back: tags
// such as v01 or v+1 are not revisions). v0 is a revision: kpt and Porch
// read <pkg>/v0 tags as revision 0.
func ParseRevision(v string) (int, bool) {
	digits, ok := strings.CutPrefix(v, "v")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || strconv.Itoa(n) != digits {
		return 0, false
	}
	return n, true
}

// Tag is the tag name of published revision n of pkg, <pkg>/v<n>, as
// forges list tags (without refs/tags/).
func Tag(pkg string, n int) string { return pkg + "/" + RevisionName(n) }

// TagRef is the full ref of published revision n of pkg.
func TagRef(pkg string, n int) string { return TagRefPrefix + Tag(pkg, n) }

// BranchRef is the full ref of a branch.
func BranchRef(branch string) string { return BranchRefPrefix + branch }

// DraftBranch is the branch of pkg's draft in workspace ws.
func DraftBranch(pkg, ws string) string { return DraftsPrefix + pkg + "/" + ws }

// ProposedBranch is the branch of pkg's proposal in workspace ws.
func ProposedBranch(pkg, ws string) string { return ProposedPrefix + pkg + "/" + ws }

// DeletionProposedBranch is the branch proposing to delete published
// revision n of pkg.
func DeletionProposedBranch(pkg string, n int) string {
	return DeletionProposedPrefix + Tag(pkg, n)
}

// splitLast splits "<pkg>/<last>" at its last slash; both parts must be
// non-empty.
func splitLast(s string) (pkg, last string, ok bool) {
	i := strings.LastIndex(s, "/")
	if i <= 0 || i == len(s)-1 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// ParseTag reads a tag name (as forges list tags, without refs/tags/) as
// <pkg>/v<N>; ok is false for tags that are not package revisions (release
// tags such as v1.2.0, <pkg>/latest, ...).
func ParseTag(name string) (pkg string, revision int, ok bool) {
	pkg, v, ok := splitLast(name)
	if !ok {
		return "", 0, false
	}
	n, ok := ParseRevision(v)
	if !ok {
		return "", 0, false
	}
	return pkg, n, true
}

// ParseBranch classifies a branch name (without refs/heads/) of Porch's
// layout; ok is false for other branches (main, kptbot/..., ...).
func ParseBranch(name string) (RefInfo, bool) {
	if rest, found := strings.CutPrefix(name, DraftsPrefix); found {
		pkg, ws, ok := splitLast(rest)
		return RefInfo{Package: pkg, Workspace: ws, Lifecycle: Draft}, ok
	}
	if rest, found := strings.CutPrefix(name, ProposedPrefix); found {
		pkg, ws, ok := splitLast(rest)
		return RefInfo{Package: pkg, Workspace: ws, Lifecycle: Proposed}, ok
	}
	if rest, found := strings.CutPrefix(name, DeletionProposedPrefix); found {
		pkg, n, ok := ParseTag(rest)
		return RefInfo{Package: pkg, Revision: n, Lifecycle: DeletionProposed}, ok
	}
	return RefInfo{}, false
}

// ParseRef classifies a full ref name of Porch's layout; ok is false for
// refs that are not package revisions (other branches, tags not
// <pkg>/v<N>, remote-tracking refs).
func ParseRef(ref string) (RefInfo, bool) {
	if b, found := strings.CutPrefix(ref, BranchRefPrefix); found {
		info, ok := ParseBranch(b)
		if !ok {
			return RefInfo{}, false
		}
		return info, true
	}
	if t, found := strings.CutPrefix(ref, TagRefPrefix); found {
		pkg, n, ok := ParseTag(t)
		if !ok {
			return RefInfo{}, false
		}
		return RefInfo{Package: pkg, Revision: n, Lifecycle: Published}, true
	}
	return RefInfo{}, false
}

// Ref is the full ref name of a package revision: the inverse of ParseRef.
func (i RefInfo) Ref() string {
	switch i.Lifecycle {
	case Draft:
		return BranchRef(DraftBranch(i.Package, i.Workspace))
	case Proposed:
		return BranchRef(ProposedBranch(i.Package, i.Workspace))
	case DeletionProposed:
		return BranchRef(DeletionProposedBranch(i.Package, i.Revision))
	case Published:
		return TagRef(i.Package, i.Revision)
	}
	return ""
}

// tagOf reads name as a tag: a full refs/tags/ ref or a short tag name;
// other full refs (refs/heads/..., refs/remotes/...) are not tags.
func tagOf(name string) (string, bool) {
	if t, found := strings.CutPrefix(name, TagRefPrefix); found {
		return t, true
	}
	return name, !strings.HasPrefix(name, "refs/")
}

// LatestOf finds pkg's highest published revision among items, whose
// names (name(item)) are tag names as forges list them or full ref names;
// index is the item carrying it, -1 when pkg has no published revision
// (then revision is 0). It is the one place "latest" is decided, so a tag
// <pkg>/v0 counts, and <pkg>/v01 or another package's <pkg>/sub/v9 do not.
func LatestOf[T any](pkg string, items []T, name func(T) string) (revision, index int) {
	revision, index = 0, -1
	for i, it := range items {
		t, ok := tagOf(name(it))
		if !ok {
			continue
		}
		p, n, ok := ParseTag(t)
		if !ok || p != pkg {
			continue
		}
		if index < 0 || n > revision {
			revision, index = n, i
		}
	}
	return revision, index
}

// LatestByPackage is, in one pass, every package's highest published
// revision among items (named as for LatestOf); a package with no
// published revision is absent.
func LatestByPackage[T any](items []T, name func(T) string) map[string]int {
	out := map[string]int{}
	for _, it := range items {
		t, ok := tagOf(name(it))
		if !ok {
			continue
		}
		if p, n, ok := ParseTag(t); ok {
			if cur, seen := out[p]; !seen || n > cur {
				out[p] = n
			}
		}
	}
	return out
}

// Latest is pkg's highest published revision among names (tag names or
// full ref names); ok is false when there is none.
func Latest(pkg string, names []string) (revision int, ok bool) {
	n, i := LatestOf(pkg, names, func(s string) string { return s })
	return n, i >= 0
}

// Next is the revision a new publication of pkg gets: one more than the
// highest published, 1 for the first.
func Next(pkg string, names []string) int {
	n, ok := Latest(pkg, names)
	if !ok {
		return 1
	}
	return n + 1
}

// CheckNames reports a package or workspace name Porch's layout cannot
// hold: a package is a relative path (basens, catalog/basens), a
// workspace one path segment (v1, my-change).
func CheckNames(pkg, ws string) error {
	if pkg == "" || strings.HasPrefix(pkg, "/") || strings.Contains(pkg, "..") || strings.HasSuffix(pkg, "/") {
		return fmt.Errorf("package name %q: expected a relative path such as basens or catalog/basens", pkg)
	}
	if ws == "" || strings.Contains(ws, "/") {
		return fmt.Errorf("workspace name %q: expected a single path segment such as v1 or my-change", ws)
	}
	return nil
}
