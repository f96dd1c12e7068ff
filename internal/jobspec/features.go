package jobspec

import (
	"math/bits"
	"slices"

	"github.com/neardup/neardup/internal/radix"
)

// smallSet is the largest feature list sorted by sortSmall; longer ones go
// to radix.Sort.
const smallSet = 256

// sortSet sorts f ascending and removes repeats, in f's memory, and returns
// the set and the scratch (grown as needed) for the next call. A short
// document has a few dozen features, where slices.Sort (what radix.Sort
// does below its cutoff) spent more than the shingling itself, mostly in
// mispredicted comparisons: sortSmall places them with one counting pass
// instead.
func sortSet(f, scratch []uint64) ([]uint64, []uint64) {
	if len(f) <= smallSet {
		if cap(scratch) < len(f) {
			scratch = make([]uint64, max(len(f), 64))
		}
		return sortSmall(f, scratch[:len(f)]), scratch
	}
	if cap(scratch) < len(f) {
		scratch = make([]uint64, len(f))
	}
	scratch = radix.Sort(f, scratch[:len(f)])
	return slices.Compact(f), scratch
}

// sortSmall sorts f (at most smallSet values) ascending without repeats,
// in f's memory, using scratch (as long as f): the values are counted into
// between n and 2n buckets of equal width over [min, max] (features are
// hashes, spread evenly: about one a bucket), placed into scratch bucket by
// bucket, and an insertion sort, which finds them almost in order, finishes
// the order while they are copied back without repeats. Values crowded into
// few buckets cost at most the insertion sort of smallSet values.
func sortSmall(f, scratch []uint64) []uint64 {
	n := len(f)
	if n < 2 {
		return f
	}
	lo, hi := f[0], f[0]
	for _, v := range f[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo == hi {
		return f[:1]
	}
	b := bits.Len(uint(n)) // 2^b buckets: n < 2^b ≤ 2n
	// shift makes (hi-lo)>>shift fit in b bits.
	shift := max(bits.Len64(hi-lo)-b, 0)
	var count [2 * smallSet]uint16
	for _, v := range f {
		count[(v-lo)>>shift]++
	}
	// Running sums in a register: summing in place waits on each store.
	sum := uint16(0)
	for i, c := range count[:1<<b] {
		sum += c
		count[i] = sum
	}
	// count[k] is now the end of bucket k: fill each from its end.
	for _, v := range f {
		k := (v - lo) >> shift
		count[k]--
		scratch[count[k]] = v
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
