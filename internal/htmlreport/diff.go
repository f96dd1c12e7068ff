package htmlreport

import (
	"slices"
	"strings"
)

// opKind is one step of an edit script.
type opKind uint8

const (
	opEqual  opKind = iota // a[i] == b[j]
	opDelete               // a[i] only
	opInsert               // b[j] only
)

type op struct {
	kind opKind
	i, j int // index into a (equal, delete) and b (equal, insert)
}

// diffTokens returns a shortest edit script turning a into b (Myers, "An
// O(ND) difference algorithm", 1986), or false if it needs more than maxD
// insertions and deletions. Time O((N+M)·D), memory O(D²) for the trace.
func diffTokens(a, b []string, maxD int) ([]op, bool) {
	n, m := len(a), len(b)
	off := n + m + 1
	v := make([]int, 2*off+1) // v[off+k]: furthest x on diagonal k = x − y
	var trace [][]int         // trace[d]: v[−d..d] after round d
	for d := 0; d <= n+m; d++ {
		if d > maxD {
			return nil, false
		}
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1] // down: insert b[y]
			} else {
				x = v[off+k-1] + 1 // right: delete a[x]
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, slices.Clone(v[off-d:off+d+1]))
				return backtrack(trace, n, m), true
			}
		}
		trace = append(trace, slices.Clone(v[off-d:off+d+1]))
	}
	return nil, false // unreachable: round n+m always ends
}

func backtrack(trace [][]int, n, m int) []op {
	var ops []op
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1] // v[−(d−1)..d−1]
		at := func(k int) int { return prev[k+d-1] }
		k := x - y
		var pk int
		if k == -d || k != d && at(k-1) < at(k+1) {
			pk = k + 1 // came down: an insertion
		} else {
			pk = k - 1 // came right: a deletion
		}
		px := at(pk)
		py := px - pk
		// The snake after the move.
		sx, sy := px, py
		if pk == k+1 {
			sy++
		} else {
			sx++
		}
		for x > sx && y > sy {
			x--
			y--
			ops = append(ops, op{opEqual, x, y})
		}
		if pk == k+1 {
			ops = append(ops, op{opInsert, x, py})
		} else {
			ops = append(ops, op{opDelete, px, y})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		ops = append(ops, op{opEqual, x, y})
	}
	slices.Reverse(ops)
	return ops
}

// Span is a run of words of one side of a comparison.
type Span struct {
	// Text is the words, joined by single spaces.
	Text string
	// Kind is "same", "diff" (only on this side) or "gap" (Text says how
	// many shared words were left out).
	Kind string
}

// Comparison is two texts side by side, their differing words marked.
type Comparison struct {
	A, B []Span
	// Truncated reports that only the first maxWords words of each text
	// were compared; Unaligned that the texts differ too much to align
	// and are shown unmarked.
	Truncated, Unaligned bool
	// Changed is the number of words only in A plus only in B.
	Changed int
}

// Compare aligns two texts word by word and marks the words each has that the
// other lacks. Runs of more than 2·context shared words are shortened to their
// first and last context words around a gap. Only the first maxWords words of
// each text are compared.
func Compare(a, b string, context, maxWords int) Comparison {
	wa, wb := strings.Fields(a), strings.Fields(b)
	var c Comparison
	if len(wa) > maxWords || len(wb) > maxWords {
		c.Truncated = true
		wa, wb = wa[:min(len(wa), maxWords)], wb[:min(len(wb), maxWords)]
	}
	ops, ok := diffTokens(wa, wb, max(200, (len(wa)+len(wb))/2))
	if !ok {
		c.Unaligned = true
		c.A = []Span{{strings.Join(wa, " "), "same"}}
		c.B = []Span{{strings.Join(wb, " "), "same"}}
		return c
	}
	var eq []string // pending shared words
	flush := func(last bool) {
		if len(eq) == 0 {
			return
		}
		first := len(c.A) == 0
		keepHead, keepTail := context, context
		if first {
			keepHead = 0
		}
		if last {
			keepTail = 0
		}
		if len(eq) > keepHead+keepTail+context {
			var spans []Span
			if keepHead > 0 {
				spans = append(spans, Span{strings.Join(eq[:keepHead], " "), "same"})
			}
			spans = append(spans, Span{gapText(len(eq) - keepHead - keepTail), "gap"})
			if keepTail > 0 {
				spans = append(spans, Span{strings.Join(eq[len(eq)-keepTail:], " "), "same"})
			}
			c.A = append(c.A, spans...)
			c.B = append(c.B, spans...)
		} else {
			s := Span{strings.Join(eq, " "), "same"}
			c.A = append(c.A, s)
			c.B = append(c.B, s)
		}
		eq = eq[:0]
	}
	var da, db []string
	flushDiff := func() {
		if len(da) > 0 {
			c.A = append(c.A, Span{strings.Join(da, " "), "diff"})
		}
		if len(db) > 0 {
			c.B = append(c.B, Span{strings.Join(db, " "), "diff"})
		}
		c.Changed += len(da) + len(db)
		da, db = da[:0], db[:0]
	}
	for _, o := range ops {
		switch o.kind {
		case opEqual:
			flushDiff()
			eq = append(eq, wa[o.i])
		case opDelete:
			flush(false)
			da = append(da, wa[o.i])
		case opInsert:
			flush(false)
			db = append(db, wb[o.j])
		}
	}
	flushDiff()
	flush(true)
	return c
}

func gapText(n int) string {
	if n == 1 {
		return "… 1 shared word …"
	}
	return "… " + itoa(n) + " shared words …"
}
