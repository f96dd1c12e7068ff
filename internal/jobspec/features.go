package jobspec

import (
	"math/bits"
	"slices"

	"github.com/neardup/neardup/internal/radix"
)

// smallSet is the largest feature list sorted by sortTable; longer ones go
// to radix.Sort.
const smallSet = 256

// setSorter sorts feature lists into sets (sortSet), keeping its scratch
// from call to call. The zero value is ready; not safe for concurrent use.
type setSorter struct {
	scratch []uint64
	// tab and occ are sortTable's table and its bitmap of slots in use,
	// kept here rather than declared in it: a local array is zeroed whole
	// on every call, where a list of n values clears n/8 words of occ
	// and no slot of tab.
	tab [tableSlots]uint64
	occ [(tableSlots + 63) / 64]uint64
}

// sortSet sorts f ascending and removes repeats, in f's memory, and returns
// the set. A short document has a few dozen features, where slices.Sort
// (what radix.Sort does below its cutoff) spent more than the shingling
// itself, mostly in mispredicted comparisons: sortTable places most of them
// straight where they go instead.
func (s *setSorter) sortSet(f []uint64) []uint64 {
	if len(f) <= smallSet {
		return sortTable(f, &s.tab, &s.occ)
	}
	if cap(s.scratch) < len(f) {
		s.scratch = make([]uint64, len(f))
	}
	s.scratch = radix.Sort(f, s.scratch[:len(f)])
	return slices.Compact(f)
}

// tableBits is how many times the slots of sortTable's table outnumber the
// values, as a power of two: 3 (8n to 16n slots for n values). Fewer slots
// a value put more values in runs, where each is placed by comparisons
// that mispredict; in BenchmarkSortSet (CPU-s, on a loaded machine) one
// (2n to 4n) cost about 40 % more than three, two about 15 % more, and
// four 13 % more (its bitmap's words outnumber the values).
const tableBits = 3

// tableSlots is the most slots sortTable uses: the home slots of smallSet
// values and room for a run of them past the last.
const tableSlots = 2*smallSet<<tableBits + smallSet

// sortTable sorts f (at most smallSet values) ascending without repeats, in
// f's memory, by an ordered table (Amble and Knuth's ordered
// linear probing, with the slot order the values' order): each value goes
// to its home slot, the top bits of the bits in which the values differ, or,
// where that is taken, into the sorted run there, the larger values moved
// up by one; a repeat is met in the run and dropped. A value's home is
// never below that of a smaller one, so the table, read in slot order, is
// the set. A bitmap marks the slots in use: only it is cleared (a word for
// 64 slots), and reading the set back visits the values only, not the
// slots. With eight to sixteen slots a value most land in an empty slot.
// It cost 18 % less than the counting sort into 2n to 4n buckets and
// insertion sort it replaces (BenchmarkSortSet), whose prefix sum over
// the buckets and insertion sort's mispredicted comparisons were most of
// its time.
func sortTable(f []uint64, tab *[tableSlots]uint64, occ *[(tableSlots + 63) / 64]uint64) []uint64 {
	n := len(f)
	if n < 2 {
		return f
	}
	f0, diff := f[0], uint64(0)
	for _, v := range f[1:] {
		diff |= v ^ f0
	}
	if diff == 0 {
		return f[:1]
	}
	width := bits.Len64(diff)
	b := bits.Len(uint(n)) + tableBits // 2^b home slots: 8n < 2^b ≤ 16n
	shift := max(width-b, 0)
	mask := uint64(1)<<b - 1
	slots := 1<<b + n // a run starting at the last home ends within n slots
	words := occ[:(slots+63)/64]
	clear(words)
	t := tab[:slots]
	for _, v := range f {
		j := int((v >> shift) & mask)
		if words[j>>6]>>(j&63)&1 == 0 {
			// The common case: an empty home.
			t[j] = v
			words[j>>6] |= 1 << (j & 63)
			continue
		}
		// The run at j: skip its smaller values, drop a repeat, move
		// the larger ones up by one.
		for words[j>>6]>>(j&63)&1 != 0 && t[j] < v {
			j++
		}
		if words[j>>6]>>(j&63)&1 != 0 {
			if t[j] == v {
				continue
			}
			k := j + 1
			for words[k>>6]>>(k&63)&1 != 0 {
				k++
			}
			copy(t[j+1:k+1], t[j:k])
			words[k>>6] |= 1 << (k & 63)
		} else {
			words[j>>6] |= 1 << (j & 63)
		}
		t[j] = v
	}
	m := 0
	for w, word := range words {
		for ; word != 0; word &= word - 1 {
			f[m] = t[w<<6|bits.TrailingZeros64(word)]
			m++
		}
	}
	return f[:m]
}
