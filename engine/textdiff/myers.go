package textdiff

// This file (with confusing.go and slide.go) decides which lines changed.
// It reproduces the choices GNU diff makes, so that among the many equally
// short diffs of two files the same one is printed:
//
//  1. Lines at the start and end that are identical in both files are set
//     aside, except for a horizon of a few lines next to the differing
//     middle, into which changes may still slide.
//  2. Lines with no counterpart in the other file (and, in their midst,
//     lines with very many counterparts) are "confusing": they are marked
//     changed up front and hidden from the matching step, which makes it
//     faster and steers it away from matching on noise (confusing.go).
//  3. The remaining lines are matched with Myers' O((N+M)·D) algorithm in
//     its linear-space form (E. Myers, "An O(ND) Difference Algorithm and
//     Its Variations", Algorithmica 1, 1986, section 4.2): a bidirectional
//     search finds the middle of an optimal edit path, and both halves are
//     solved recursively.
//  4. Runs of changed lines are slid over equal neighbouring lines to a
//     canonical position (slide.go).

// diffLines compares two line sequences and returns, for each sequence, a
// flag per line telling whether that line is part of a change (deleted from
// a, inserted into b). Unflagged lines pair up in order. horizon is the
// number of identical leading and trailing lines kept next to the middle
// for changes to slide into; GNU diff uses the context size.
//
// The result is minimal (the unflagged lines form a longest common
// subsequence) except when the cost cap of the matching step or the
// discarding of confusing lines gets in the way; both only matter for
// large, heavily edited inputs.
func diffLines(a, b []string, horizon int) (ca, cb []bool) {
	ca = make([]bool, len(a))
	cb = make([]bool, len(b))

	// Step 1: identical ends.
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	if p == len(a) && p == len(b) {
		return ca, cb
	}
	lo := max(p-horizon, 0)
	s := 0
	for s < len(a)-lo && s < len(b)-lo && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	hi := max(s-horizon, 0)
	ra, rb := a[lo:len(a)-hi], b[lo:len(b)-hi]
	fa, fb := ca[lo:len(a)-hi], cb[lo:len(b)-hi]

	// Give every line a class number: equal lines, equal numbers.
	ids := make(map[string]int32, len(ra))
	classify := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	xa, xb := classify(ra), classify(rb)

	// Step 2: confusing lines.
	counts := func(classes []int32) []int32 {
		n := make([]int32, len(ids))
		for _, c := range classes {
			n[c]++
		}
		return n
	}
	na, nb := counts(xa), counts(xb)
	da := confusingLines(xa, nb)
	db := confusingLines(xb, na)
	ka, ia := keepLines(xa, da, fa)
	kb, ib := keepLines(xb, db, fb)

	// Step 3: matching.
	m := &matcher{a: ka, b: kb, ia: ia, ib: ib, ca: fa, cb: fb}
	m.init()
	m.compare(0, len(ka), 0, len(kb), false)

	// Step 4: canonical positions.
	slideRuns(xa, fa, fb)
	slideRuns(xb, fb, fa)
	return ca, cb
}

// matcher holds the state of one Myers comparison of the sequences a and
// b, whose element i is line ia[i] (resp. ib[i]) of the compared region.
type matcher struct {
	a, b   []int32
	ia, ib []int
	ca, cb []bool
	// fwd and bwd hold, per diagonal k = x-y (stored at index k+off), the
	// furthest x reached by the forward and backward searches.
	fwd, bwd []int
	off      int
	// maxCost bounds the edit cost explored by a non-minimal split before
	// it settles for the most promising point found so far.
	maxCost int
}

func (m *matcher) init() {
	// Diagonals range over [-len(b), len(a)], plus a sentinel on each side.
	n := len(m.a) + len(m.b) + 3
	m.fwd = make([]int, n)
	m.bwd = make([]int, n)
	m.off = len(m.b) + 1
	// About twice the square root of the input size, at least 4096.
	t := 1
	for d := n; d != 0; d >>= 2 {
		t <<= 1
	}
	m.maxCost = max(t, 4096)
}

// compare marks the changed lines of a[x0:x1] against b[y0:y1]. With
// minimal set, it never gives up on an optimal result.
func (m *matcher) compare(x0, x1, y0, y1 int, minimal bool) {
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
			for _, i := range m.ib[y0:y1] {
				m.cb[i] = true
			}
			return
		case y0 == y1:
			for _, i := range m.ia[x0:x1] {
				m.ca[i] = true
			}
			return
		}
		sp := m.split(x0, x1, y0, y1, minimal)
		m.compare(x0, sp.x, y0, sp.y, sp.loMinimal)
		// Loop instead of recursing on the second half.
		x0, y0, minimal = sp.x, sp.y, sp.hiMinimal
	}
}

// splitPoint is where split cuts a comparison in two, and whether each half
// may still be solved without a cost cap.
type splitPoint struct {
	x, y                 int
	loMinimal, hiMinimal bool
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
// O((N+M)·D) and the memory by O(N+M). The first and last elements of the
// box must differ (compare trims equal ends), and the point returned lies
// strictly between the corners.
//
// Unless minimal is set, the search stops once the cost reaches maxCost and
// returns the frontier point that got furthest instead.
func (m *matcher) split(x0, x1, y0, y1 int, minimal bool) splitPoint {
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
				return splitPoint{x, y, true, true}
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
				return splitPoint{x, y, true, true}
			}
		}

		if !minimal && cost >= m.maxCost {
			return m.bestEffort(x0, x1, y0, y1, flo, fhi, blo, bhi)
		}
	}
}

// bestEffort gives up on an optimal split once the search has become too
// expensive, and picks whichever frontier point made the most progress
// towards its far corner. The diff stays valid but may be longer than
// necessary. The half on the side of the chosen frontier is known to be
// solved optimally by that frontier, so it may be searched without a cap.
func (m *matcher) bestEffort(x0, x1, y0, y1, flo, fhi, blo, bhi int) splitPoint {
	fx, fy, fbest := 0, 0, -1
	for k := fhi; k >= flo; k -= 2 {
		x := min(m.fwd[m.off+k], x1)
		y := x - k
		if y > y1 {
			x, y = y1+k, y1
		}
		if x+y > fbest {
			fx, fy, fbest = x, y, x+y
		}
	}
	bx, by, bbest := 0, 0, int(^uint(0)>>1)
	for k := bhi; k >= blo; k -= 2 {
		x := max(m.bwd[m.off+k], x0)
		y := x - k
		if y < y0 {
			x, y = y0+k, y0
		}
		if x+y < bbest {
			bx, by, bbest = x, y, x+y
		}
	}
	if (x1+y1)-bbest < fbest-(x0+y0) {
		return splitPoint{fx, fy, true, false}
	}
	return splitPoint{bx, by, false, true}
}
