package jobspec

import (
	"math/bits"
	"slices"

	"github.com/neardup/neardup/internal/radix"
)

// smallSet is the largest feature list sorted by sortSmall; longer ones go
// to radix.Sort.
const smallSet = 256

// extraBucketBits doubles sortSmall's buckets per value that many times:
// one (2n to 4n buckets for n values) leaves the insertion sort fewer values
// sharing a bucket to order, for a prefix sum twice as long, and cost 6 %
// less than none in BenchmarkSortSet; two cost more.
const extraBucketBits = 1

// setSorter sorts feature lists into sets (sortSet), keeping its scratch
// from call to call. The zero value is ready; not safe for concurrent use.
type setSorter struct {
	scratch []uint64
	// count is sortSmall's buckets, kept here rather than declared in it:
	// a local array is zeroed whole (1 KiB) on every call, where a list of
	// n values uses (and clears) fewer than 2n buckets.
	count [2 * smallSet << extraBucketBits]uint16
}

// sortSet sorts f ascending and removes repeats, in f's memory, and returns
// the set. A short document has a few dozen features, where slices.Sort
// (what radix.Sort does below its cutoff) spent more than the shingling
// itself, mostly in mispredicted comparisons: sortSmall places them with one
// counting pass instead.
func (s *setSorter) sortSet(f []uint64) []uint64 {
	if cap(s.scratch) < len(f) {
		s.scratch = make([]uint64, max(len(f), 64))
	}
	if len(f) <= smallSet {
		return sortSmall(f, s.scratch[:len(f)], &s.count)
	}
	s.scratch = radix.Sort(f, s.scratch[:len(f)])
	return slices.Compact(f)
}

// sortSmall sorts f (at most smallSet values) ascending without repeats,
// in f's memory, using scratch (as long as f) and count: the values are
// counted into between 2n and 4n buckets (extraBucketBits) of equal width
// over the bits in which they differ (features are hashes, spread evenly:
// about half a value a bucket), placed into scratch bucket by bucket, and
// an insertion sort, which finds them almost in order, finishes the order
// before they are copied back without repeats. Values crowded into few
// buckets cost at most the insertion sort of smallSet values.
func sortSmall(f, scratch []uint64, count *[2 * smallSet << extraBucketBits]uint16) []uint64 {
	n := len(f)
	if n < 2 {
		return f
	}
	// The bits above the highest one in which the values differ are
	// common to all: the buckets split the bits below, which orders the
	// values as they do. (An OR of XORs has no branches; a pass of min and
	// max compiled to two a value.)
	f0, diff := f[0], uint64(0)
	for _, v := range f[1:] {
		diff |= v ^ f0
	}
	if diff == 0 {
		return f[:1]
	}
	width := bits.Len64(diff)
	b := bits.Len(uint(n)) + extraBucketBits // 2^b buckets: 2n < 2^b ≤ 4n
	// v>>shift&mask is the top b of the width bits (all of them if fewer).
	shift := max(width-b, 0)
	// The mask, as wide as the buckets, also lets the compiler drop the
	// bounds checks.
	cnt := count[:1<<b]
	mask := uint64(len(cnt) - 1)
	clear(cnt)
	for _, v := range f {
		cnt[(v>>shift)&mask]++
	}
	// Running sums in a register: summing in place waits on each store.
	sum := uint16(0)
	for i, c := range cnt {
		sum += c
		cnt[i] = sum
	}
	// cnt[k] is now the end of bucket k: fill each from its end.
	for _, v := range f {
		k := (v >> shift) & mask
		cnt[k]--
		scratch[cnt[k]] = v
	}
	for i := 1; i < n; i++ {
		v := scratch[i]
		j := i
		for ; j > 0 && scratch[j-1] > v; j-- {
			scratch[j] = scratch[j-1]
		}
		scratch[j] = v
	}
	last := scratch[0]
	f[0] = last
	m := 1
	for _, v := range scratch[1:] {
		if v != last {
			f[m] = v
			m++
			last = v
		}
	}
	return f[:m]
}
