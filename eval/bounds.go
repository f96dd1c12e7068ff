package eval

import "math"

// bounds holds the exact integer bounds that the join's filters derive from a
// threshold. Every bound is derived from accept, the very predicate the
// verification step applies, so no filter can reject a pair that the
// verification would accept: in particular a pair whose Jaccard is exactly the
// threshold (in float64) is never lost to rounding in t/(1+t) or t·|x|.
//
// The derivations rely on two monotonicity facts. For a fixed sum s = |x|+|y|,
// o/(s-o) grows with the overlap o, and float64 division is correctly rounded,
// hence monotone; so accept(o, s-o) is false below some least overlap
// minOverlap(s) and true from there on. And for a fixed o, o/(s-o) shrinks as
// s grows, so minOverlap never decreases as s grows.
type bounds struct {
	t float64
}

// accept reports whether a pair with overlap o and union u passes: the
// definition of the join's result. o and u are at most 2^32, exact in float64.
func (b bounds) accept(o, u int) bool {
	return float64(o)/float64(u) >= b.t
}

// minOverlap returns the least overlap o ≥ 1 with accept(o, s-o), for the sum
// s = |x|+|y| ≥ 2 of two non-empty set sizes. The real-valued estimate
// ⌈t/(1+t)·s⌉ is corrected by stepping in whole units, using accept itself.
func (b bounds) minOverlap(s int) int {
	c := int(math.Ceil(b.t / (1 + b.t) * float64(s)))
	c = min(max(c, 1), s)
	for c > 1 && b.accept(c-1, s-c+1) {
		c--
	}
	for c < s && !b.accept(c, s-c) {
		c++
	}
	return c
}

// minSize returns the least partner size m ≥ 1 such that a set of size m ≤ n
// could reach the threshold with a set of size n ≥ 1: the least m with
// accept(m, n). A smaller partner y, with overlap at most |y| and union at
// least n, has Jaccard at most |y|/n in reals and so, by monotone rounding, at
// most float64(|y|)/float64(n) < t.
func (b bounds) minSize(n int) int {
	c := int(math.Ceil(b.t * float64(n)))
	c = min(max(c, 1), n)
	for c > 1 && b.accept(c-1, n) {
		c--
	}
	for c < n && !b.accept(c, n) {
		c++
	}
	return c
}

// probePrefix returns how many of its rarest tokens a set of size n must probe
// the index with: n - minOverlap(n+minSize(n)) + 1. Every partner y has
// minSize(n) ≤ |y| ≤ n, so it needs an overlap of at least
// minOverlap(n+|y|) ≥ minOverlap(n+minSize(n)).
func (b bounds) probePrefix(n int) int {
	return n - b.minOverlap(n+b.minSize(n)) + 1
}

// indexPrefix returns how many of its rarest tokens a set of size n is indexed
// under: n - minOverlap(2n) + 1. Sets are probed only by sets at least as
// large, so a pair needs an overlap of at least minOverlap(n+|x|) ≥
// minOverlap(2n).
func (b bounds) indexPrefix(n int) int {
	return n - b.minOverlap(2*n) + 1
}
