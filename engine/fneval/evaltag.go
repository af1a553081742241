package fneval

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// kpt's --tag takes an exact version (used as the tag as written) or a
// semantic version constraint (Masterminds/semver syntax), resolved by
// kpt against the registry's tags. kptbot resolves constraints against
// the built-in functions' version lines (vX.Y, read as X.Y.0), the
// versions it can run without a registry.

var exactVersionRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v?\d+(\.\d+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
})

// exactVersion reports whether tag parses as a single version, which kpt
// uses literally.
func exactVersion(tag string) bool { return exactVersionRE().MatchString(tag) }

// looksConstraint reports whether tag is written as a constraint rather
// than a plain tag such as "latest".
func looksConstraint(tag string) bool {
	return strings.ContainsAny(tag, "~^<>=*,| ") || strings.Contains(tag, ".x") || strings.Contains(tag, ".X")
}

type version [3]int

func (v version) cmp(w version) int {
	for i := range v {
		if v[i] != w[i] {
			if v[i] < w[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// parsePartial reads 1, 1.2 or 1.2.3 (v optional, x or * wildcards); n is
// how many leading parts were given as numbers.
func parsePartial(s string) (v version, n int, err error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) > 3 || s == "" {
		return v, 0, fmt.Errorf("%q is not a version", s)
	}
	for i, p := range parts {
		if p == "x" || p == "X" || p == "*" {
			break
		}
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return v, 0, fmt.Errorf("%q is not a version", s)
		}
		v[i], n = x, i+1
	}
	return v, n, nil
}

// term is one comparison of a constraint as a range [lo, hi).
type term struct {
	lo, hi       version
	hasLo, hasHi bool
	loIncl       bool
	hiIncl       bool
}

func (t term) admits(v version) bool {
	if t.hasLo && (v.cmp(t.lo) < 0 || (!t.loIncl && v.cmp(t.lo) == 0)) {
		return false
	}
	if t.hasHi && (v.cmp(t.hi) > 0 || (!t.hiIncl && v.cmp(t.hi) == 0)) {
		return false
	}
	return true
}

// bump is the first version past the n given parts of v (1.2 -> 1.3.0).
func bump(v version, n int) version {
	if n == 0 {
		return version{1 << 30}
	}
	var out version
	copy(out[:n], v[:n])
	out[n-1]++
	return out
}

func parseTerm(s string) (term, error) {
	op := ""
	for _, o := range []string{">=", "<=", "!=", "=>", "=<", ">", "<", "=", "~>", "~", "^"} {
		if strings.HasPrefix(s, o) {
			op = o
			break
		}
	}
	v, n, err := parsePartial(s[len(op):])
	if err != nil {
		return term{}, err
	}
	switch op {
	case "", "=":
		if n == 0 {
			return term{}, nil
		}
		return term{lo: v, hasLo: true, loIncl: true, hi: bump(v, n), hasHi: n < 3, hiIncl: n == 3}, nil
	case ">=", "=>":
		return term{lo: v, hasLo: true, loIncl: true}, nil
	case ">":
		if n < 3 {
			return term{lo: bump(v, max(n, 1)), hasLo: true, loIncl: true}, nil
		}
		return term{lo: v, hasLo: true}, nil
	case "<=", "=<":
		if n < 3 {
			return term{hi: bump(v, max(n, 1)), hasHi: true}, nil
		}
		return term{hi: v, hasHi: true, hiIncl: true}, nil
	case "<":
		return term{hi: v, hasHi: true}, nil
	case "~", "~>":
		return term{lo: v, hasLo: true, loIncl: true, hi: bump(v, min(max(n, 1), 2)), hasHi: true}, nil
	case "^":
		k := 1 // the first non-zero part given is fixed
		for k < n && v[k-1] == 0 {
			k++
		}
		return term{lo: v, hasLo: true, loIncl: true, hi: bump(v, k), hasHi: true}, nil
	}
	return term{}, fmt.Errorf("operator %q is not supported", op)
}

// highestMatching picks the highest of the version lines (vX.Y) that the
// constraint admits.
func highestMatching(constraint string, lines []string) (string, error) {
	var groups [][]term
	for _, alt := range strings.Split(constraint, "||") {
		var g []term
		for _, f := range strings.FieldsFunc(alt, func(r rune) bool { return r == ',' || r == ' ' }) {
			t, err := parseTerm(f)
			if err != nil {
				return "", fmt.Errorf("--tag %q: %w", constraint, err)
			}
			g = append(g, t)
		}
		groups = append(groups, g)
	}
	best, bestV := "", version{-1}
	for _, l := range lines {
		v, _, err := parsePartial(l)
		if err != nil {
			continue
		}
		for _, g := range groups {
			ok := true
			for _, t := range g {
				ok = ok && t.admits(v)
			}
			if ok && v.cmp(bestV) > 0 {
				best, bestV = l, v
			}
		}
	}
	if best == "" {
		return "", fmt.Errorf("no tag could be found matching the version constraint %q (built-in versions: %s)", constraint, strings.Join(lines, ", "))
	}
	return best, nil
}
