package boilerplate

import "math/bits"

// cms is a count-min sketch of line hashes (Cormode and Muthukrishnan,
// 2005): depth rows of counters, each hash adding one to a counter per row;
// a hash's estimate is the least of its counters, never below its true
// count and above it by at most a fraction of the total with high
// probability. The line hashes are already uniform, so each row takes its
// index from the hash by multiply-shift with its own odd constant.
// Saturating 32-bit counters. Not safe for concurrent use; deterministic.
type cms struct {
	rows  [depth][]uint32
	shift uint
}

const (
	depth    = 4
	maxWidth = 1 << 20
)

// mults are the rows' odd multipliers (digits of the golden ratio and of
// other irrationals, as fmix64 and xxh3 use).
var mults = [depth]uint64{0x9e3779b97f4a7c15, 0xc2b2ae3d27d4eb4f, 0x165667b19e3779f9, 0xff51afd7ed558ccd}

// newCMS returns a sketch of about budget bytes: a power of two of
// counters per row, from 1024 to maxWidth (beyond which the sketch's only
// use, choosing which texts to keep, gains nothing).
func newCMS(budget int64) cms {
	per := min(max(budget/(4*depth), 1024), maxWidth)
	logW := bits.Len64(uint64(per)) - 1
	var c cms
	for i := range c.rows {
		c.rows[i] = make([]uint32, 1<<logW)
	}
	c.shift = uint(64 - logW)
	return c
}

// add counts h once and returns its new estimate.
func (c *cms) add(h uint64) uint32 {
	est := ^uint32(0)
	for i := range c.rows {
		j := (h * mults[i]) >> c.shift
		v := c.rows[i][j]
		if v != ^uint32(0) {
			v++
			c.rows[i][j] = v
		}
		est = min(est, v)
	}
	return est
}

// estimate returns h's estimate.
func (c *cms) estimate(h uint64) uint32 {
	est := ^uint32(0)
	for i := range c.rows {
		est = min(est, c.rows[i][(h*mults[i])>>c.shift])
	}
	return est
}
