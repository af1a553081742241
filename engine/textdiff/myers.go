package textdiff

// This file holds the line-matching core: a linear-space implementation of
// the O((N+M)·D) algorithm from E. Myers, "An O(ND) Difference Algorithm and
// Its Variations", Algorithmica 1 (1986), section 4.2 (bidirectional search
// for the middle of an optimal edit path, then divide and conquer), followed
// by a normalisation pass that slides ambiguous change runs into the
// canonical position GNU diff reports.

// diffLines compares two line sequences and returns, for each sequence, a
// flag per line telling whether that line is part of a change (deleted from
// a, inserted into b). Lines that are not flagged pair up in order and form a
// longest common subsequence, except for huge inputs with a very large
// number of differences, where the cost cap in split trades minimality for
// speed.
func diffLines(a, b []string) (ca, cb []bool) {
	ca = make([]bool, len(a))
	cb = make([]bool, len(b))

	// A common head and tail never changes; only the middle needs matching.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	switch {
	case len(am) == 0:
		markAll(cb[pre : len(b)-suf])
	case len(bm) == 0:
		markAll(ca[pre : len(a)-suf])
	default:
		m := newMatcher(am, bm, ca[pre:len(a)-suf], cb[pre:len(b)-suf])
		m.compare(0, len(m.a), 0, len(m.b))
	}

	slideRuns(a, ca, cb)
	slideRuns(b, cb, ca)
	return ca, cb
}

func markAll(flags []bool) {
	for i := range flags {
		flags[i] = true
	}
}

// matcher holds the state of one Myers comparison. Lines are replaced by
// small integers so that the inner loops compare words, not strings.
type matcher struct {
	a, b   []int32
	ca, cb []bool
	// fwd and bwd hold, per diagonal k = x-y (stored at index k+off), the
	// furthest x reached by the forward and backward searches.
	fwd, bwd []int
	off      int
	// maxCost bounds the edit cost explored by a single split before it
	// settles for the most promising point found so far.
	maxCost int
}

func newMatcher(a, b []string, ca, cb []bool) *matcher {
	ids := make(map[string]int32, len(a))
	m := &matcher{
		a:  make([]int32, len(a)),
		b:  make([]int32, len(b)),
		ca: ca,
		cb: cb,
	}
	for i, s := range a {
		id, ok := ids[s]
		if !ok {
			id = int32(len(ids))
			ids[s] = id
		}
		m.a[i] = id
	}
	for i, s := range b {
		id, ok := ids[s]
		if !ok {
			id = int32(len(ids))
			ids[s] = id
		}
		m.b[i] = id
	}
	// Diagonals range over [-len(b), len(a)], plus a sentinel on each side.
	n := len(a) + len(b) + 3
	m.fwd = make([]int, n)
	m.bwd = make([]int, n)
	m.off = len(b) + 1
	m.maxCost = 4096
	if c := 2 * isqrt(len(a)+len(b)); c > m.maxCost {
		m.maxCost = c
	}
	return m
}

func isqrt(n int) int {
	r := 0
	for (r+1)*(r+1) <= n {
		r++
	}
	return r
}

// compare marks the changed lines of a[x0:x1] against b[y0:y1].
func (m *matcher) compare(x0, x1, y0, y1 int) {
	for {
		for x0 < x1 && y0 < y1 && m.a[x0] == m.b[y0] {
			x0++
			y0++
		}
		for x1 > x0 && y1 > y0 && m.a[x1-1] == m.b[y1-1] {
			x1--
			y1--
		}
		switch {
		case x0 == x1:
			markAll(m.cb[y0:y1])
			return
		case y0 == y1:
			markAll(m.ca[x0:x1])
			return
		}
		x, y := m.split(x0, x1, y0, y1)
		m.compare(x0, x, y0, y)
		// Loop instead of recursing on the second half.
		x0, y0 = x, y
	}
}

const (
	noForward  = -1                 // forward sentinel: worse than any x
	noBackward = int(^uint(0) >> 1) // backward sentinel: worse than any x
)

// split finds a point (x, y) on an optimal edit path from (x0, y0) to
// (x1, y1) by running the greedy search forward from the top-left corner and
// backward from the bottom-right corner, one edit at a time, until the two
// frontiers overlap on a diagonal. Both halves of the problem then cost
// about half as much as the whole, which bounds the total work by
// O((N+M)·D) and the memory by O(N+M). The returned point is strictly
// between the corners, so both halves are smaller problems. The first and
// last lines of the box must differ (compare trims equal ends).
func (m *matcher) split(x0, x1, y0, y1 int) (int, int) {
	fwd, bwd, off := m.fwd, m.bwd, m.off
	a, b := m.a, m.b
	kmin, kmax := x0-y1, x1-y0 // diagonals that cross the box
	fk, bk := x0-y0, x1-y1     // diagonals of the two corners
	// When the corner diagonals differ by an odd amount, the frontiers can
	// only meet right after a forward step; otherwise after a backward one.
	odd := (fk-bk)&1 != 0
	flo, fhi := fk, fk
	blo, bhi := bk, bk
	fwd[off+fk] = x0
	bwd[off+bk] = x1

	for cost := 1; ; cost++ {
		// Widen the forward frontier by one diagonal on each side, or pull
		// it back in where it would leave the box. Fresh outer diagonals
		// get a sentinel neighbour so the step below takes the real one.
		if flo > kmin {
			flo--
			fwd[off+flo-1] = noForward
		} else {
			flo++
		}
		if fhi < kmax {
			fhi++
			fwd[off+fhi+1] = noForward
		} else {
			fhi--
		}
		for k := fhi; k >= flo; k -= 2 {
			// Arrive on diagonal k either by deleting a[x] from diagonal
			// k-1 or by inserting b[y] from diagonal k+1, whichever gets
			// further; on a tie, the deletion.
			var x int
			if left, up := fwd[off+k-1], fwd[off+k+1]; left >= up {
				x = left + 1
			} else {
				x = up
			}
			y := x - k
			for x < x1 && y < y1 && a[x] == b[y] {
				x++
				y++
			}
			fwd[off+k] = x
			if odd && blo <= k && k <= bhi && bwd[off+k] <= x {
				return x, y
			}
		}

		// The same for the backward frontier, which moves towards smaller
		// x and y.
		if blo > kmin {
			blo--
			bwd[off+blo-1] = noBackward
		} else {
			blo++
		}
		if bhi < kmax {
			bhi++
			bwd[off+bhi+1] = noBackward
		} else {
			bhi--
		}
		for k := bhi; k >= blo; k -= 2 {
			var x int
			if up, left := bwd[off+k-1], bwd[off+k+1]; up < left {
				x = up
			} else {
				x = left - 1
			}
			y := x - k
			for x > x0 && y > y0 && a[x-1] == b[y-1] {
				x--
				y--
			}
			bwd[off+k] = x
			if !odd && flo <= k && k <= fhi && x <= fwd[off+k] {
				return x, y
			}
		}

		if cost >= m.maxCost {
			return m.bestEffort(x0, x1, y0, y1, flo, fhi, blo, bhi)
		}
	}
}

// bestEffort gives up on an optimal split once the search has become too
// expensive, and picks whichever frontier point made the most progress
// towards its far corner. The result is still a valid split, but the final
// diff may contain more changes than necessary.
func (m *matcher) bestEffort(x0, x1, y0, y1, flo, fhi, blo, bhi int) (int, int) {
	bestX, bestY, bestGain := -1, -1, -1
	for k := fhi; k >= flo; k -= 2 {
		x := m.fwd[m.off+k]
		y := x - k
		if x > x1 || y > y1 || (x == x1 && y == y1) {
			continue
		}
		if gain := x + y - x0 - y0; gain > bestGain {
			bestX, bestY, bestGain = x, y, gain
		}
	}
	for k := bhi; k >= blo; k -= 2 {
		x := m.bwd[m.off+k]
		y := x - k
		if x < x0 || y < y0 || (x == x0 && y == y0) {
			continue
		}
		if gain := x1 + y1 - x - y; gain > bestGain {
			bestX, bestY, bestGain = x, y, gain
		}
	}
	if bestGain <= 0 {
		// Cannot happen after at least one step in each direction, but
		// never loop forever: split off the first line of a.
		return x0 + 1, y0
	}
	return bestX, bestY
}

// slideRuns normalises the change runs of one sequence. An insertion or
// deletion next to equal lines can often be shifted without changing the
// diff's size: deleting the second of two identical lines is the same as
// deleting the first. To produce the same hunks as GNU diff, each run is
// slid up and down as far as the lines allow, absorbing neighbouring runs it
// touches; it then rests at the lowest position where it lines up with a
// change run in the other sequence, or, if there is none, at the lowest
// position overall.
//
// lines and changed describe the sequence being normalised; other are the
// change flags of the opposite sequence, whose unchanged lines pair up in
// order with the unchanged lines here.
func slideRuns(lines []string, changed, other []bool) {
	n, m := len(changed), len(other)
	// skipOther advances j past a run of changed lines in other and
	// reports whether there were any.
	skipOther := func(j int) (int, bool) {
		skipped := false
		for j < m && other[j] {
			j++
			skipped = true
		}
		return j, skipped
	}
	// backOther moves j back to the previous unchanged line of other.
	backOther := func(j int) int {
		j--
		for j > 0 && other[j] {
			j--
		}
		return j
	}

	i, j := 0, 0 // j: the partner in other of the unchanged line i
	for {
		// Find the next run, keeping j paired with i.
		for i < n && !changed[i] {
			j, _ = skipOther(j)
			i++
			j++
		}
		if i == n {
			return
		}
		start := i
		for i < n && changed[i] {
			i++
		}
		end := i
		j, _ = skipOther(j)
		// Now j pairs with the unchanged line at end (or is m at the end),
		// and other[j-1] tells whether a run in other ends right here.

		aligned := -1 // lowest end at which the run meets a run in other
		for {
			length := end - start

			// Slide up while the line above equals the run's last line,
			// absorbing any run reached on the way.
			for start > 0 && lines[start-1] == lines[end-1] {
				start--
				end--
				changed[start] = true
				changed[end] = false
				for start > 0 && changed[start-1] {
					start--
				}
				j = backOther(j)
			}

			aligned = -1
			if j > 0 && other[j-1] {
				aligned = end
			}

			// Slide down while the line below equals the run's first line,
			// absorbing any run reached on the way.
			for end < n && lines[start] == lines[end] {
				changed[start] = false
				changed[end] = true
				start++
				end++
				for end < n && changed[end] {
					end++
				}
				var skipped bool
				j, skipped = skipOther(j + 1)
				if skipped {
					aligned = end
				}
			}

			if end-start == length {
				break
			}
			// The run grew by merging; it may be able to move further.
		}

		// Prefer a position that lines up with a change in other, so that
		// a replaced block shows as one change rather than two.
		for aligned >= 0 && aligned < end {
			start--
			end--
			changed[start] = true
			changed[end] = false
			j = backOther(j)
		}
		i = end
	}
}
