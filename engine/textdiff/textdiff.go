// Package textdiff prints unified diffs of text files and directory trees,
// in the format of GNU `diff -u` and `git diff`, so that callers such as
// `kptbot pkg diff` do not depend on an external diff tool.
//
// Lines are compared byte for byte, including their terminating newline: a
// final line without a newline differs from the same text with one, and is
// flagged with "\ No newline at end of file" as GNU diff does. Content that
// contains a NUL byte is treated as binary and only reported as differing.
//
// The line matching is an implementation of Myers' O((N+M)·D) algorithm in
// its linear-space form, so files of many thousands of lines with a few
// changes are compared in time roughly proportional to their size.
package textdiff

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
)

// DevNull is the label used for the missing side of an added or removed
// file in Tree output.
const DevNull = "/dev/null"

// noNewline is the marker printed after a line that ends without a newline.
const noNewline = "\\ No newline at end of file\n"

// Unified returns the unified diff of a and b with the given file labels
// (such as "a/path" and "b/path") and context lines of context around each
// change; callers normally use 3, and a negative value is treated as 0. The
// result starts with the "---" and "+++" header lines and matches the output
// of `diff -u -U context --label aLabel --label bLabel`. It is the empty
// string when a and b are equal. If either input contains a NUL byte, the
// result is the single line "Binary files aLabel and bLabel differ".
func Unified(aLabel, bLabel string, a, b []byte, context int) string {
	if bytes.Equal(a, b) {
		return ""
	}
	if isBinary(a) || isBinary(b) {
		return "Binary files " + aLabel + " and " + bLabel + " differ\n"
	}
	var sb strings.Builder
	sb.WriteString("--- " + aLabel + "\n")
	sb.WriteString("+++ " + bLabel + "\n")
	writeHunks(&sb, splitLines(a), splitLines(b), context)
	return sb.String()
}

// Summary lists the files that differ between two trees, each list in
// sorted path order.
type Summary struct {
	// Added holds the paths present only in the second tree.
	Added []string
	// Removed holds the paths present only in the first tree.
	Removed []string
	// Modified holds the paths present in both trees with different
	// content.
	Modified []string
}

// Empty reports whether the summary lists no changed files.
func (s Summary) Empty() bool {
	return len(s.Added) == 0 && len(s.Removed) == 0 && len(s.Modified) == 0
}

// Tree diffs two directory trees, each given as a map from slash-separated
// relative path to file content, and returns the combined diff text
// together with a summary of the changed files.
//
// Files are visited in sorted path order and unchanged files are skipped.
// Each changed file P starts with a git-style "diff --git aPrefix+P
// bPrefix+P" line followed by its Unified diff, labelled aPrefix+P and
// bPrefix+P. An added file is diffed against "/dev/null" on the old side and
// a removed file against "/dev/null" on the new side; an added or removed
// empty file shows just the header lines. A non-empty prefix that lacks a
// trailing slash gets one, so "a" and "a/" are equivalent; an empty prefix
// leaves paths bare.
func Tree(aPrefix, bPrefix string, a, b map[string][]byte, context int) (string, Summary) {
	aPrefix, bPrefix = dirPrefix(aPrefix), dirPrefix(bPrefix)
	paths := make([]string, 0, len(a)+len(b))
	for p := range a {
		paths = append(paths, p)
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)

	var sb strings.Builder
	var sum Summary
	for _, p := range paths {
		ac, inA := a[p]
		bc, inB := b[p]
		aName, bName := aPrefix+p, bPrefix+p
		var body string
		switch {
		case inA && inB:
			if bytes.Equal(ac, bc) {
				continue
			}
			sum.Modified = append(sum.Modified, p)
			body = Unified(aName, bName, ac, bc, context)
		case inB:
			sum.Added = append(sum.Added, p)
			body = Unified(DevNull, bName, nil, bc, context)
			if body == "" {
				body = "--- " + DevNull + "\n+++ " + bName + "\n"
			}
		default:
			sum.Removed = append(sum.Removed, p)
			body = Unified(aName, DevNull, ac, nil, context)
			if body == "" {
				body = "--- " + aName + "\n+++ " + DevNull + "\n"
			}
		}
		sb.WriteString("diff --git " + aName + " " + bName + "\n")
		sb.WriteString(body)
	}
	return sb.String(), sum
}

func dirPrefix(p string) string {
	if p != "" && !strings.HasSuffix(p, "/") {
		return p + "/"
	}
	return p
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0
}

// splitLines splits b after each newline. Every line keeps its terminator,
// except possibly the last one.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// change is a maximal block of deleted and inserted lines: a[a:a+del] is
// replaced by b[b:b+ins]. Lines outside changes pair up one to one.
type change struct {
	a, b     int
	del, ins int
}

// changes turns per-line change flags into a list of change blocks.
func changes(ca, cb []bool) []change {
	var cs []change
	i, j := 0, 0
	for i < len(ca) || j < len(cb) {
		if (i < len(ca) && ca[i]) || (j < len(cb) && cb[j]) {
			c := change{a: i, b: j}
			for i < len(ca) && ca[i] {
				i++
			}
			for j < len(cb) && cb[j] {
				j++
			}
			c.del, c.ins = i-c.a, j-c.b
			cs = append(cs, c)
			continue
		}
		i++
		j++
	}
	return cs
}

// writeHunks writes the hunks of the diff between a and b. As in GNU diff,
// changes separated by at most 2*context unchanged lines share a hunk.
func writeHunks(sb *strings.Builder, a, b []string, context int) {
	// More context than lines changes nothing, and keeps the arithmetic
	// below from overflowing.
	context = min(max(context, 0), len(a)+len(b)+1)
	ca, cb := diffLines(a, b, context)
	cs := changes(ca, cb)
	for len(cs) > 0 {
		n := 1
		for n < len(cs) && cs[n].a-(cs[n-1].a+cs[n-1].del) <= 2*context {
			n++
		}
		writeHunk(sb, a, b, cs[:n], context)
		cs = cs[n:]
	}
}

func writeHunk(sb *strings.Builder, a, b []string, cs []change, context int) {
	first, last := cs[0], cs[len(cs)-1]
	a0 := max(first.a-context, 0)
	b0 := first.b - (first.a - a0)
	a1 := min(last.a+last.del+context, len(a))
	b1 := last.b + last.ins + (a1 - (last.a + last.del))

	sb.WriteString("@@ -")
	writeRange(sb, a0, a1-a0)
	sb.WriteString(" +")
	writeRange(sb, b0, b1-b0)
	sb.WriteString(" @@\n")

	i := a0
	for _, c := range cs {
		writeLines(sb, ' ', a[i:c.a])
		writeLines(sb, '-', a[c.a:c.a+c.del])
		writeLines(sb, '+', b[c.b:c.b+c.ins])
		i = c.a + c.del
	}
	writeLines(sb, ' ', a[i:a1])
}

// writeRange writes a hunk range the way GNU diff does: "start,count" with
// 1-based start, just "start" when count is 1, and for an empty range the
// number of the line before it followed by ",0".
func writeRange(sb *strings.Builder, start, count int) {
	switch count {
	case 0:
		sb.WriteString(strconv.Itoa(start))
		sb.WriteString(",0")
	case 1:
		sb.WriteString(strconv.Itoa(start + 1))
	default:
		sb.WriteString(strconv.Itoa(start + 1))
		sb.WriteByte(',')
		sb.WriteString(strconv.Itoa(count))
	}
}

func writeLines(sb *strings.Builder, mark byte, lines []string) {
	for _, l := range lines {
		sb.WriteByte(mark)
		sb.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			sb.WriteByte('\n')
			sb.WriteString(noNewline)
		}
	}
}
