package textdiff

// confusingLines returns which lines of one file to discard before
// matching. lines holds the file's line classes, other the number of lines
// of each class in the other file. A line of a class absent from the other
// file cannot match, so it is always discarded. A line of a class that is
// very common in the other file (blank lines, closing braces) is discarded
// only inside a long stretch of unmatchable lines, where matching it would
// just produce noise.
func confusingLines(lines []int32, other []int32) []bool {
	const (
		keep        = 0
		discard     = 1
		provisional = 2
	)
	n := len(lines)
	many := 5 // "very common" grows slowly with the file size
	for t := n / 64; ; many *= 2 {
		if t >>= 2; t <= 0 {
			break
		}
	}
	marks := make([]byte, n)
	for i, c := range lines {
		switch other[c] {
		case 0:
			marks[i] = discard
		default:
			if int(other[c]) > many {
				marks[i] = provisional
			}
		}
	}

	for i := 0; i < n; i++ {
		switch marks[i] {
		case keep:
			continue
		case provisional:
			// Not inside a stretch of unmatchable lines.
			marks[i] = keep
			continue
		}
		// A stretch of non-kept lines starts here with an unmatchable one.
		end, prov := i, 0
		for end < n && marks[end] != keep {
			if marks[end] == provisional {
				prov++
			}
			end++
		}
		// A stretch ends with an unmatchable line too.
		for end > i && marks[end-1] == provisional {
			end--
			marks[end] = keep
			prov--
		}
		run := marks[i:end]
		length := len(run)
		if prov*4 > length {
			// Too many common lines to be noise: keep them all.
			for k := range run {
				if run[k] == provisional {
					run[k] = keep
				}
			}
			continue
		}

		// Keep every sub-stretch of at least minimum consecutive common
		// lines; minimum grows like the square root of the stretch.
		minimum := 1
		for t := length >> 2; ; minimum <<= 1 {
			if t >>= 2; t <= 0 {
				break
			}
		}
		minimum++
		consec := 0
		for k := 0; k < length; k++ {
			switch {
			case run[k] != provisional:
				consec = 0
			case consec+1 == minimum:
				// Long enough: go back and keep the whole sub-stretch.
				consec++
				k -= consec
			case consec+1 > minimum:
				consec++
				run[k] = keep
			default:
				consec++
			}
		}

		// Near either end of the stretch, keep common lines until three
		// unmatchable lines in a row, or an unmatchable line at least
		// eight lines in, show that the stretch has really begun.
		trimEdge := func(at func(k int) *byte) {
			consec := 0
			for k := 0; k < length; k++ {
				mk := at(k)
				if k >= 8 && *mk == discard {
					return
				}
				switch *mk {
				case provisional:
					*mk = keep
					consec = 0
				case keep:
					consec = 0
				default:
					consec++
				}
				if consec == 3 {
					return
				}
			}
		}
		trimEdge(func(k int) *byte { return &run[k] })
		trimEdge(func(k int) *byte { return &run[length-1-k] })
		i += length - 1
	}

	out := make([]bool, n)
	for i, mk := range marks {
		out[i] = mk != keep
	}
	return out
}

// keepLines marks the discarded lines as changed and returns the classes of
// the others along with their indexes in lines.
func keepLines(lines []int32, discarded, changed []bool) (kept []int32, index []int) {
	kept = make([]int32, 0, len(lines))
	index = make([]int, 0, len(lines))
	for i, c := range lines {
		if discarded[i] {
			changed[i] = true
			continue
		}
		kept = append(kept, c)
		index = append(index, i)
	}
	return kept, index
}
