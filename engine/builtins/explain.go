package builtins

import (
	"fmt"
	"github.com/kptbot/kptbot/internal/spelling"
	"sort"
	"strings"
)

// catalogPrefixes are the registry paths whose images may run as built-ins:
// other registries may host different code under the same name.
var catalogPrefixes = [...]string{"", "ghcr.io/kptdev/krm-functions-catalog/", "gcr.io/kpt-fn/"}

// splitCatalogImage splits an image reference into its catalog function name,
// its tag and its digest; name is "" when the image is not from a catalog
// registry path, and other then holds its repository.
func splitCatalogImage(image string) (name, tag, digest, other string) {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref, digest = ref[:i], ref[i+1:]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref, tag = ref[:i], ref[i+1:]
	}
	for _, p := range catalogPrefixes {
		rest, ok := strings.CutPrefix(ref, p)
		if ok && rest != "" && !strings.Contains(rest, "/") {
			return rest, tag, digest, ""
		}
	}
	return "", tag, digest, ref
}

// Explain says why image does not run as a built-in and what would: the
// tags a built-in of that name supports, the built-in whose name is
// nearest ("did you mean"), or the registry paths built-ins come from. It
// returns "" when Lookup finds image.
func Explain(image string) string {
	if _, ok := Lookup(image); ok {
		return ""
	}
	name, tag, digest, other := splitCatalogImage(image)
	base := name
	if base == "" {
		base = other[strings.LastIndex(other, "/")+1:]
	}
	if f := byName(base); f != nil {
		switch {
		case name == "":
			return fmt.Sprintf("only images of the catalog (ghcr.io/kptdev/krm-functions-catalog/%s or gcr.io/kpt-fn/%s) run as the built-in %s, not %s", base, base, base, other)
		case digest != "":
			return fmt.Sprintf("a digest (@%s) pins a build the built-in %s may not match; use a tag instead: %s", digest, base, f.supportedTags())
		default:
			return fmt.Sprintf("the built-in %s does not support the tag %q; supported tags: %s", base, tag, f.supportedTags())
		}
	}
	msg := "no built-in is named " + fmt.Sprintf("%q", base)
	if near := nearestName(base); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return msg + "; built-ins: " + strings.Join(names(), ", ")
}

// supportedTags lists the tags Lookup accepts for f, for messages.
func (f *Function) supportedTags() string {
	var lines []string
	for _, g := range functions() {
		if g.Name != f.Name {
			continue
		}
		for _, v := range g.Versions {
			lines = append(lines, v+".x")
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, ", ") + ", latest, unstable, or no tag"
}

func byName(name string) *Function {
	for _, f := range functions() {
		if f.Name == name {
			return &f
		}
	}
	return nil
}

func names() []string {
	var out []string
	for _, f := range All() {
		if len(out) == 0 || out[len(out)-1] != f.Name {
			out = append(out, f.Name)
		}
	}
	return out
}

// nearestName is the built-in name closest to name by edit distance, when
// it is close enough to be a typo (at most a third of its length), or that
// contains name or is contained in it.
func nearestName(name string) string {
	best, bestD := "", len(name)/3+1
	for _, n := range names() {
		if d := spelling.Distance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best != "" {
		return best
	}
	for _, n := range names() {
		if len(name) >= 4 && (strings.Contains(n, name) || strings.Contains(name, n)) {
			return n
		}
	}
	return ""
}
