package index

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Packed postings (layout version 2; see "Layout" in the package doc). A bulk
// build writes its postings packed, one value per group of bucket keys that
// share their high G bits, under the key 'q' <group:4>. The value lists the
// group's postings sorted by bucket key, then document number:
//
//	k   one byte: the Rice parameter of the gaps between bucket keys (0–31)
//	w   one byte: the width in bits of the document numbers (0–32)
//	n   uvarint: the number of postings (at least 1)
//	    then n postings in a bit stream, least significant bit first: the
//	    gap from the previous posting's bucket key (the first one's from the
//	    group's first key) Rice-coded — gap>>k as that many 1 bits and a 0,
//	    then the k low bits of gap — and the document number in w bits.
//
// Bucket keys are hashes, so the gaps are geometric and Rice codes them in
// about log2(mean gap) + 1.5 bits; with 16 million postings, 10 bits for the
// key and 20 for the document, 3.8 bytes a posting against 7.6 for a posting
// of its own key.

// packedGroupTarget is the number of postings a bulk build aims to put in a
// group: enough that the key and the block overhead of a value are small per
// posting, few enough that a bucket lookup decodes little (a query decodes
// about this many postings for each bucket that may hold any).
const packedGroupTarget = 32

// maxPackedGroupBits bounds G: 2^24 groups take 400 million postings at the
// target; a bigger build puts more in each group.
const maxPackedGroupBits = 24

// packedGroupBits returns the number of high bucket-key bits that name a
// group for a build of n postings: about packedGroupTarget postings a group,
// at least 1 bit.
func packedGroupBits(n int64) int {
	g := 1
	for g < maxPackedGroupBits && n>>g > packedGroupTarget {
		g++
	}
	return g
}

// posting is a packed posting: the low bits of its bucket key (those below
// the group's: 32 − G of a 4-byte key, 64 − G of an 8-byte one) and its
// document number.
type posting struct {
	low uint64
	doc uint32
}

// packedLowBits returns the bucket-key bits below a group's, for keys of w
// bytes and g group bits.
func packedLowBits(w int, g uint) uint { return uint(8*w) - g }

// packedSplit returns the group and the low bits of bucket key bk
// (left-aligned in 64 bits), stored in w bytes, under g group bits.
func packedSplit(bk uint64, w int, g uint) (group uint32, low uint64) {
	k := bk >> (64 - 8*w)
	lb := packedLowBits(w, g)
	return uint32(k >> lb), k & (1<<lb - 1)
}

// packedJoin is the inverse of packedSplit.
func packedJoin(group uint32, low uint64, w int, g uint) uint64 {
	return (uint64(group)<<packedLowBits(w, g) | low) << (64 - 8*w)
}

// maxRiceParam returns the largest Rice parameter of a group with lowBits
// bits below the group's: 31 for 4-byte keys (as layout version 2 has
// it), 63 for 8-byte ones.
func maxRiceParam(lowBits uint) uint {
	if lowBits <= 32 {
		return 31
	}
	return 63
}

// appendPacked appends the value of a group's postings, which must be sorted
// by (low, doc), distinct, and not empty.
func appendPacked(dst []byte, ps []posting) []byte {
	var maxDoc uint32
	for _, p := range ps {
		maxDoc = max(maxDoc, p.doc)
	}
	w := uint(bits.Len32(maxDoc))
	k := riceParam(ps)
	dst = append(dst, byte(k), byte(w))
	dst = binary.AppendUvarint(dst, uint64(len(ps)))
	bw := bitWriter{buf: dst}
	prev := uint64(0)
	for _, p := range ps {
		gap := p.low - prev
		prev = p.low
		bw.unary(gap >> k)
		bw.write(gap&(1<<k-1), k)
		bw.write(uint64(p.doc), w)
	}
	return bw.flush()
}

// riceParam returns the Rice parameter that codes the gaps of ps in the
// fewest bits, searched near log2 of the mean gap.
func riceParam(ps []posting) uint {
	mean := ps[len(ps)-1].low / uint64(len(ps))
	k0 := 0
	if mean > 0 {
		k0 = bits.Len64(mean) - 1
	}
	best, bestCost := uint(0), uint64(1<<63)
	for k := max(k0-1, 0); k <= min(k0+1, 63); k++ {
		cost := uint64(len(ps)) * uint64(k+1)
		prev := uint64(0)
		for _, p := range ps {
			cost += uint64((p.low - prev) >> k)
			prev = p.low
		}
		if cost < bestCost {
			best, bestCost = uint(k), cost
		}
	}
	return best
}

// packedIter reads the postings of a group value in order.
type packedIter struct {
	r       bitReader
	k, w    uint
	left    int
	lowBits uint // bucket-key bits below the group's
	low     uint64
	doc     uint32
	started bool
}

// init starts reading value v of a group whose postings have lowBits bits
// of bucket key below the group's.
func (it *packedIter) init(v []byte, lowBits uint) error {
	if len(v) < 3 {
		return fmt.Errorf("%w: packed postings of %d bytes", ErrCorrupt, len(v))
	}
	k, w := uint(v[0]), uint(v[1])
	n, m := binary.Uvarint(v[2:])
	body := v[2+max(m, 0):]
	switch {
	case k > maxRiceParam(lowBits) || w > 32:
		return fmt.Errorf("%w: packed postings with Rice parameter %d and document width %d", ErrCorrupt, k, w)
	case m <= 0 || n == 0 || n > 8*uint64(len(body)):
		return fmt.Errorf("%w: packed postings count %d in %d bytes", ErrCorrupt, n, len(body))
	}
	*it = packedIter{r: bitReader{buf: body}, k: k, w: w, left: int(n), lowBits: lowBits}
	return nil
}

// next returns the next posting; ok is false at the end.
func (it *packedIter) next() (low uint64, doc uint32, ok bool, err error) {
	if it.left == 0 {
		return 0, 0, false, nil
	}
	it.left--
	q, ok1 := it.r.unary(uint64(1) << it.lowBits >> it.k)
	r, ok2 := it.r.read(it.k)
	d, ok3 := it.r.read(it.w)
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, false, fmt.Errorf("%w: packed postings end early", ErrCorrupt)
	}
	gap := uint64(q)<<it.k | r
	nl := it.low + gap
	switch {
	case nl >= uint64(1)<<it.lowBits:
		return 0, 0, false, fmt.Errorf("%w: packed posting beyond its group", ErrCorrupt)
	case it.started && gap == 0 && uint32(d) <= it.doc:
		return 0, 0, false, fmt.Errorf("%w: packed postings out of order", ErrCorrupt)
	}
	it.low, it.doc, it.started = nl, uint32(d), true
	return it.low, uint32(d), true, nil
}

// bitWriter appends bits to buf, least significant first.
type bitWriter struct {
	buf []byte
	acc uint64
	n   uint // bits in acc, < 8 between calls
}

// write appends the low nbits (at most 64) of v, which has no higher bits.
func (w *bitWriter) write(v uint64, nbits uint) {
	if nbits > 32 {
		w.write(v&(1<<32-1), 32)
		v, nbits = v>>32, nbits-32
	}
	w.acc |= v << w.n
	w.n += nbits
	for w.n >= 8 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
}

// unary appends q 1 bits and a 0.
func (w *bitWriter) unary(q uint64) {
	for ; q >= 31; q -= 31 {
		w.write(1<<31-1, 31)
	}
	w.write(1<<q-1, uint(q)+1)
}

// flush returns buf with the last partial byte.
func (w *bitWriter) flush() []byte {
	if w.n > 0 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc, w.n = 0, 0
	}
	return w.buf
}

// bitReader reads what bitWriter wrote.
type bitReader struct {
	buf []byte
	acc uint64
	n   uint
}

func (r *bitReader) fill() {
	for r.n <= 56 && len(r.buf) > 0 {
		r.acc |= uint64(r.buf[0]) << r.n
		r.buf = r.buf[1:]
		r.n += 8
	}
}

// read returns the next nbits (at most 64) bits.
func (r *bitReader) read(nbits uint) (uint64, bool) {
	if nbits > 32 {
		lo, ok1 := r.read(32)
		hi, ok2 := r.read(nbits - 32)
		return hi<<32 | lo, ok1 && ok2
	}
	if r.n < nbits {
		r.fill()
		if r.n < nbits {
			return 0, false
		}
	}
	v := r.acc & (1<<nbits - 1)
	r.acc >>= nbits
	r.n -= nbits
	return v, true
}

// unary reads 1 bits up to a 0 and returns their number, which must be
// below limit.
func (r *bitReader) unary(limit uint64) (uint32, bool) {
	var q uint64
	for {
		if r.n == 0 {
			r.fill()
			if r.n == 0 {
				return 0, false
			}
		}
		ones := uint(bits.TrailingZeros64(^r.acc)) // bits above n are 0, so ones ≤ n
		if ones < r.n {
			q += uint64(ones)
			r.acc >>= ones + 1
			r.n -= ones + 1
			return uint32(q), q < limit
		}
		q += uint64(r.n)
		r.acc, r.n = 0, 0
		if q >= limit {
			return 0, false
		}
	}
}
