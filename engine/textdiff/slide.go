package textdiff

// slideRuns normalises the change runs of one sequence. An insertion or
// deletion next to equal lines can often be shifted without changing the
// diff's size: deleting the second of two identical lines is the same as
// deleting the first. Each run is slid up and down as far as the lines
// allow, absorbing neighbouring runs it touches; it then rests at the lowest
// position where it lines up with a change run in the other sequence, so
// that a replaced block shows as one change rather than two, or, if there
// is none, at the lowest position overall.
//
// lines holds the line classes of the sequence, changed its change flags;
// other are the change flags of the opposite sequence, whose unchanged lines
// pair up in order with the unchanged lines here.
func slideRuns(lines []int32, changed, other []bool) {
	n, m := len(changed), len(other)
	// skipOther advances j over changed lines of other and reports whether
	// there were any.
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
