package simhash

import (
	"fmt"
	"math"
	"math/bits"
)

// Distance returns the Hamming distance between two fingerprints: the number
// of bit positions in which they differ, in 0..64.
func Distance(a, b uint64) int {
	return bits.OnesCount64(a ^ b)
}

// Fingerprint returns the 64-bit SimHash of a multiset of feature hashes.
//
// Every occurrence of a feature casts one vote per bit: +1 where the feature's
// bit is 1, −1 where it is 0, so a feature repeated c times weighs c (term
// count weighting). Bit i of the result is 1 iff the vote for bit i is
// positive; a tie (vote exactly 0, possible when the number of features is
// even) gives 0. The empty multiset gives 0.
//
// The features must be well-mixed 64-bit hashes (such as those of package
// shingle); structured or sequential values void the similarity guarantees.
// The result does not depend on the order of features, and the slice is only
// read. Fingerprint does not allocate.
func Fingerprint(features []uint64) uint64 {
	var c counter
	c.addBlocks(features)
	return c.sum()
}

// FingerprintWeighted returns the SimHash of features where feature j votes
// with weight weights[j]: +weights[j] on the bits where it is 1 and
// −weights[j] on the bits where it is 0. Bit i of the result is 1 iff the
// weighted vote for bit i is > 0; a vote of exactly 0 gives 0, and so does
// empty input.
//
// Weights must be finite and ≥ 0; a zero weight contributes nothing. It returns
// an error wrapping ErrWeightsLength if the slices differ in length and one
// wrapping ErrInvalidWeight for a NaN, infinite or negative weight.
//
// Votes are float64 sums taken in input order, so the result is deterministic
// for a given input; reordering the input can change a bit only when that
// bit's vote is within rounding error of 0. With integer weights (and total
// weight below 2^53) the sums are exact: the result is order independent and
// equals Fingerprint of the features repeated weight times.
// FingerprintWeighted does not allocate.
func FingerprintWeighted(features []uint64, weights []float64) (uint64, error) {
	if len(features) != len(weights) {
		return 0, fmt.Errorf("%w: %d features, %d weights", ErrWeightsLength, len(features), len(weights))
	}
	for i, w := range weights {
		if !validWeight(w) {
			return 0, fmt.Errorf("%w: weights[%d] = %v (want finite and >= 0)", ErrInvalidWeight, i, w)
		}
	}
	var v [64]float64
	for i, f := range features {
		addWeighted(&v, f, weights[i])
	}
	return signs(&v), nil
}

func validWeight(w float64) bool {
	return w >= 0 && w <= math.MaxFloat64 // false for NaN, +Inf and negatives
}

// addWeighted adds ±w to each of the 64 votes without a branch per bit: the
// sign bit of w is flipped where the feature's bit is 0. This is about 5×
// faster than an if/else per bit on random features, where the branch is
// unpredictable.
func addWeighted(v *[64]float64, f uint64, w float64) {
	wb := math.Float64bits(w)
	nf := ^f
	for i := range v {
		v[i] += math.Float64frombits(wb ^ (nf << 63))
		nf >>= 1
	}
}

// signs returns the fingerprint with bit i set iff v[i] > 0.
func signs(v *[64]float64) uint64 {
	var fp uint64
	for i, x := range v {
		if x > 0 {
			fp |= 1 << i
		}
	}
	return fp
}

// Builder computes a SimHash fingerprint incrementally, one feature at a time,
// without allocating. It gives the same result as Fingerprint over the
// unit-weight features added with AddFeature and AddFeatures, and as
// FingerprintWeighted over those added with Add, combined: the vote for bit i
// is the unit votes plus the weighted votes, and bit i is 1 iff it is > 0.
//
// The zero value is an empty Builder ready to use; Reset makes a used one
// empty again, so one Builder can serve many documents. A Builder is not safe
// for concurrent use. Its result is deterministic: it depends only on the
// features and weights added (and, for weighted features, their order, as
// FingerprintWeighted explains). A Builder is about 1.4 KB; keep one per
// worker rather than one per document.
type Builder struct {
	c        counter
	pend     [blockWords]uint64 // unit-weight features waiting for a full block
	npend    int
	v        [64]float64 // weighted votes
	weighted bool        // Add has been called since the last Reset
}

// Reset empties the Builder.
func (b *Builder) Reset() {
	*b = Builder{}
}

// AddFeature adds one occurrence of feature with weight 1.
func (b *Builder) AddFeature(feature uint64) {
	b.pend[b.npend] = feature
	b.npend++
	if b.npend == blockWords {
		b.c.addBlocks(b.pend[:])
		b.npend = 0
	}
}

// AddFeatures adds one occurrence of each feature, each with weight 1. The
// slice is only read.
func (b *Builder) AddFeatures(features []uint64) {
	for b.npend > 0 && len(features) > 0 {
		b.AddFeature(features[0])
		features = features[1:]
	}
	full := len(features) &^ (blockWords - 1)
	b.c.addBlocks(features[:full])
	for _, f := range features[full:] {
		b.AddFeature(f)
	}
}

// Add adds feature with the given weight, which must be finite and ≥ 0. An
// invalid weight leaves the Builder unchanged and returns an error wrapping
// ErrInvalidWeight. Add(f, 1) and AddFeature(f) give the same fingerprint;
// AddFeature is an order of magnitude faster.
func (b *Builder) Add(feature uint64, weight float64) error {
	if !validWeight(weight) {
		return fmt.Errorf("%w: %v (want finite and >= 0)", ErrInvalidWeight, weight)
	}
	addWeighted(&b.v, feature, weight)
	b.weighted = true
	return nil
}

// Sum returns the fingerprint of everything added since the last Reset. It
// does not change the Builder: more features may be added afterwards.
func (b *Builder) Sum() uint64 {
	c := b.c // copy: Sum must not disturb the running state
	c.addTail(b.pend[:b.npend])
	if !b.weighted {
		return c.sum()
	}
	var ones [64]uint64
	c.totals(&ones)
	var v [64]float64
	n := c.n
	for i := range v {
		// The unit vote 2·ones−n is an exact integer; converting it to float64
		// is exact below 2^53 features.
		v[i] = float64(int64(2*ones[i]-n)) + b.v[i]
	}
	return signs(&v)
}

// blockWords is the number of features folded per carry-save block.
const blockWords = 16

const lsb8 = 0x0101010101010101

// counter counts, for each of the 64 bit positions, how many of the features
// added have that bit set: a positional population count.
//
// It uses a Harley–Seal carry-save adder tree: each block of 16 features is
// reduced, 5 logic operations per 3:2 compression, into bit-planes ones,
// twos, fours and eights (kept across blocks) and one plane of sixteens per
// block. The sixteens plane is spread into eight byte-lane accumulators (lane
// m of acc[j] counts bit 8m+j) that are flushed into the wide counts every 255
// blocks, before a byte can overflow. Features outside whole blocks go to
// byte lanes of their own (tail). Measured on the project machine this is
// about 1.2 ns per feature, against 52 ns for a loop over the 64 bits and
// 4.9 ns for byte lanes alone.
type counter struct {
	ones, twos, fours, eights uint64
	acc                       [8]uint64 // byte lanes of sixteens
	blocks                    int       // blocks counted in acc, < 255
	tail                      [8]uint64 // byte lanes of single features
	ntail                     int       // features counted in tail, ≤ 255
	wide                      [64]uint64
	wideUsed                  bool   // wide is not all zero
	n                         uint64 // features counted
}

// csa is a carry-save (full) adder on 64 lanes: it returns the carry and the
// sum bits of a+b+c.
func csa(a, b, c uint64) (carry, sum uint64) {
	u := a ^ b
	return (a & b) | (u & c), u ^ c
}

// addPlane adds the bits of x, one per position, to the byte lanes in acc.
func addPlane(acc *[8]uint64, x uint64) {
	acc[0] += x & lsb8
	acc[1] += (x >> 1) & lsb8
	acc[2] += (x >> 2) & lsb8
	acc[3] += (x >> 3) & lsb8
	acc[4] += (x >> 4) & lsb8
	acc[5] += (x >> 5) & lsb8
	acc[6] += (x >> 6) & lsb8
	acc[7] += (x >> 7) & lsb8
}

// flush adds the byte lanes of acc, each multiplied by w, to the wide counts
// and clears acc.
func (c *counter) flush(acc *[8]uint64, w uint64) {
	for j := range acc {
		a := acc[j]
		for m := range 8 {
			c.wide[8*m+j] += (a >> (8 * m) & 0xff) * w
		}
		acc[j] = 0
	}
	c.wideUsed = true
}

// addBlocks counts the features of xs in blocks of 16, then the rest one by
// one.
func (c *counter) addBlocks(xs []uint64) {
	ones, twos, fours, eights := c.ones, c.twos, c.fours, c.eights
	for len(xs) >= blockWords {
		x := (*[blockWords]uint64)(xs)
		var ta, tb, fa, fb, ea, eb, sixteens uint64
		ta, ones = csa(ones, x[0], x[1])
		tb, ones = csa(ones, x[2], x[3])
		fa, twos = csa(twos, ta, tb)
		ta, ones = csa(ones, x[4], x[5])
		tb, ones = csa(ones, x[6], x[7])
		fb, twos = csa(twos, ta, tb)
		ea, fours = csa(fours, fa, fb)
		ta, ones = csa(ones, x[8], x[9])
		tb, ones = csa(ones, x[10], x[11])
		fa, twos = csa(twos, ta, tb)
		ta, ones = csa(ones, x[12], x[13])
		tb, ones = csa(ones, x[14], x[15])
		fb, twos = csa(twos, ta, tb)
		eb, fours = csa(fours, fa, fb)
		sixteens, eights = csa(eights, ea, eb)
		addPlane(&c.acc, sixteens)
		c.blocks++
		if c.blocks == 255 {
			c.flush(&c.acc, 16)
			c.blocks = 0
		}
		c.n += blockWords
		xs = xs[blockWords:]
	}
	c.ones, c.twos, c.fours, c.eights = ones, twos, fours, eights
	c.addTail(xs)
}

// addTail counts features one by one.
func (c *counter) addTail(xs []uint64) {
	for len(xs) > 0 {
		if c.ntail == 255 {
			c.flush(&c.tail, 1)
			c.ntail = 0
		}
		k := min(len(xs), 255-c.ntail)
		for _, x := range xs[:k] {
			addPlane(&c.tail, x)
		}
		c.ntail += k
		c.n += uint64(k)
		xs = xs[k:]
	}
}

// low returns byte lanes j of the carry-save planes with their weights 8, 4,
// 2 and 1: at most 15 a lane.
func (c *counter) low(j int) uint64 {
	return (c.eights>>j&lsb8)<<3 | (c.fours>>j&lsb8)<<2 | (c.twos>>j&lsb8)<<1 | c.ones>>j&lsb8
}

// totals stores in ones the number of counted features with each bit set:
// the wide counts, plus 16 per sixteen in the byte lanes, plus the carry-save
// planes, plus the tail.
func (c *counter) totals(ones *[64]uint64) {
	for j := range 8 {
		low, hi, tail := c.low(j), c.acc[j], c.tail[j]
		for m := range 8 {
			s := 8 * m
			ones[s+j] = c.wide[s+j] + (hi>>s&0xff)<<4 + low>>s&0xff + tail>>s&0xff
		}
	}
}

// sum returns the unit-weight fingerprint: bit i is 1 iff more than half of
// the features have bit i set.
func (c *counter) sum() uint64 {
	if !c.wideUsed {
		return c.sumSWAR()
	}
	var ones [64]uint64
	c.totals(&ones)
	var fp uint64
	for i := 63; i >= 0; i-- {
		// 2·ones > n iff n − 2·ones wraps below 0 (counts are far below 2^62).
		fp = fp<<1 | (c.n-2*ones[i])>>63
	}
	return fp
}

// sumSWAR is sum when the wide counts are unused, so every count is below
// 254·16 + 15 + 255 < 2^15: it widens the byte lanes to 16-bit lanes and
// compares all four lanes of a word at once, which makes the fixed cost of a
// fingerprint about a third of the scalar loop's (it matters for short
// documents).
func (c *counter) sumSWAR() uint64 {
	const (
		m16  = 0x00FF00FF00FF00FF
		sign = 0x8000800080008000
		rep  = 0x0001000100010001
	)
	// count ≥ thr ⇔ 2·count > n; adding 0x8000−thr sets a lane's top bit
	// exactly when count ≥ thr, with no carry out of the lane.
	thr := c.n/2 + 1
	bias := (0x8000 - thr) * rep
	var fp uint64
	for j := range 8 {
		low, hi, tail := c.low(j), c.acc[j], c.tail[j]
		even := (hi&m16)<<4 + low&m16 + tail&m16         // bytes 0, 2, 4, 6: bits 16l+j
		odd := (hi>>8&m16)<<4 + low>>8&m16 + tail>>8&m16 // bytes 1, 3, 5, 7: bits 16l+8+j
		fp |= (even+bias)&sign>>(15-j) | (odd+bias)&sign>>(7-j)
	}
	return fp
}
