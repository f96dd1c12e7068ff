package simhash

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// slot is one entry in a table: the fingerprint permuted so that the table's
// blocks lead (the key), and the id. Distance(key1, key2) equals the distance
// between the original fingerprints, since a permutation of bit positions
// preserves the popcount of the xor, so queries never undo the permutation
// except for the matches they return.
type slot struct {
	key, id uint64
}

func cmpSlot(a, b slot) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// block is a run of bits of the fingerprint, numbered from the most
// significant bit.
type block struct {
	off, size int    // offset from the MSB, length in bits
	mask      uint64 // the block's bits in the fingerprint
}

// move carries one run of bits from the fingerprint to the key.
type move struct {
	src, dst uint64 // the run's bits in the fingerprint and in the key
	rot      int    // rotate-left amount taking src to dst
}

// table is one permuted, sorted copy of the index.
//
// Entries live in base, sorted by (key, id), with a directory over the top
// dirBits bits of the key for probing, and in delta, a small sorted slice
// that takes online inserts. Deletions of base entries are tombstones kept by
// the Index. delta and the tombstones are merged into base once they grow
// past about 2√n entries, which balances the cost of inserting into a sorted
// delta (O(|delta|) moves) against that of merging (O(n/|delta|) amortized).
type table struct {
	set    uint32 // the blocks that form the key prefix, as a bitmask
	prefix uint   // key bits that must match: the total size of set's blocks
	moves  []move

	base    []slot
	dir     []uint32 // dir[c] = first index in base whose key's top dirBits bits are ≥ c
	dirBits uint
	delta   []slot
}

// maxDirBits caps the directory at 2^22 cells (16 MiB).
const maxDirBits = 22

// newTable returns the table whose key leads with the blocks in set, in order,
// followed by the other blocks in order.
func newTable(blocks []block, set uint32) table {
	t := table{set: set}
	order := make([]int, 0, len(blocks))
	for j := range blocks {
		if set&(1<<j) != 0 {
			order = append(order, j)
			t.prefix += uint(blocks[j].size)
		}
	}
	for j := range blocks {
		if set&(1<<j) == 0 {
			order = append(order, j)
		}
	}
	dst := 0
	for i, j := range order {
		b := blocks[j]
		// Blocks adjacent in both the fingerprint and the key move together.
		if i > 0 && order[i-1] == j-1 {
			m := &t.moves[len(t.moves)-1]
			m.src |= b.mask
			m.dst |= bits.RotateLeft64(b.mask, b.off-dst)
		} else {
			t.moves = append(t.moves, move{src: b.mask, dst: bits.RotateLeft64(b.mask, b.off-dst), rot: b.off - dst})
		}
		dst += b.size
	}
	return t
}

// key permutes a fingerprint into this table's key.
func (t *table) key(fp uint64) uint64 {
	var k uint64
	for _, m := range t.moves {
		k |= bits.RotateLeft64(fp&m.src, m.rot)
	}
	return k
}

// fingerprint undoes key.
func (t *table) fingerprint(key uint64) uint64 {
	var fp uint64
	for _, m := range t.moves {
		fp |= bits.RotateLeft64(key&m.dst, -m.rot)
	}
	return fp
}

// lowerBound returns the first index i in s with s[i].key>>shift ≥ p.
func lowerBound(s []slot, p uint64, shift uint) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].key>>shift < p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// upperBound returns the first index i in s with s[i].key>>shift > p.
func upperBound(s []slot, p uint64, shift uint) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].key>>shift <= p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// baseRange returns the range of base whose keys share q's prefix.
func (t *table) baseRange(q uint64) (lo, hi int) {
	c := q >> (64 - t.dirBits) // 0 when dirBits is 0
	lo, hi = int(t.dir[c]), int(t.dir[c+1])
	if t.dirBits == t.prefix || lo == hi {
		return lo, hi
	}
	shift := 64 - t.prefix
	p := q >> shift
	s := t.base[lo:hi]
	i := lowerBound(s, p, shift)
	j := i + upperBound(s[i:], p, shift)
	return lo + i, lo + j
}

// deltaRange returns the range of delta whose keys share q's prefix.
func (t *table) deltaRange(q uint64) (lo, hi int) {
	if len(t.delta) == 0 {
		return 0, 0
	}
	shift := 64 - t.prefix
	p := q >> shift
	lo = lowerBound(t.delta, p, shift)
	hi = lo
	for hi < len(t.delta) && t.delta[hi].key>>shift == p {
		hi++
	}
	return lo, hi
}

// inBase reports whether (key, id) is in base, tombstoned or not.
func (t *table) inBase(key, id uint64) bool {
	lo, hi := t.baseRange(key)
	_, ok := slices.BinarySearchFunc(t.base[lo:hi], slot{key, id}, cmpSlot)
	return ok
}

// deltaIndex returns where (key, id) is or would be in delta.
func (t *table) deltaIndex(key, id uint64) (int, bool) {
	return slices.BinarySearchFunc(t.delta, slot{key, id}, cmpSlot)
}

// dirBitsFor returns the directory size, in bits, for a base of n entries:
// about 8 entries per cell on average, so a probe costs one directory load
// and a binary search over a few entries.
func (t *table) dirBitsFor(n int) uint {
	var r uint
	if n >= 16 {
		r = uint(bits.Len(uint(n))) - 3
	}
	return min(r, t.prefix, maxDirBits)
}

// buildDir rebuilds the directory from base.
func (t *table) buildDir() {
	n := len(t.base)
	if n > math.MaxUint32 {
		panic("simhash: index exceeds 2^32-1 entries")
	}
	r := t.dirBitsFor(n)
	cells := 1 << r
	if cap(t.dir) >= cells+1 {
		t.dir = t.dir[:cells+1]
	} else {
		t.dir = make([]uint32, cells+1)
	}
	shift := 64 - r
	j := 0
	for c := range cells {
		for j < n && t.base[j].key>>shift < uint64(c) {
			j++
		}
		t.dir[c] = uint32(j)
	}
	t.dir[cells] = uint32(n)
	t.dirBits = r
}

// updateDir brings the directory up to date after the sorted slots removed
// left base and the sorted slots added joined it: each cell's start moves by
// the number added minus the number removed in the cells before it. That
// costs O(cells + changes) instead of a scan of base; when the new size wants
// another directory size it rebuilds.
func (t *table) updateDir(removed, added []slot) {
	n := len(t.base)
	if t.dirBitsFor(n) != t.dirBits || n > math.MaxUint32 {
		t.buildDir()
		return
	}
	shift := 64 - t.dirBits
	i, j := 0, 0
	for c := range t.dir {
		for i < len(removed) && removed[i].key>>shift < uint64(c) {
			i++
		}
		for j < len(added) && added[j].key>>shift < uint64(c) {
			j++
		}
		t.dir[c] = t.dir[c] - uint32(i) + uint32(j)
	}
	t.dir[len(t.dir)-1] = uint32(n)
}

// remove removes from base the slots in the sorted dead, all present.
func (t *table) remove(dead []slot) {
	if len(dead) == 0 {
		return
	}
	w, d := 0, 0
	for _, s := range t.base {
		if d < len(dead) && dead[d] == s {
			d++
			continue
		}
		t.base[w] = s
		w++
	}
	clear(t.base[w:])
	t.base = t.base[:w]
	if cap(t.base) > 2*len(t.base)+1024 {
		t.base = slices.Clone(t.base) // give back memory after many removals
	}
	t.updateDir(dead, nil)
}

// merge merges the sorted slots of add, none present, into base. If owned,
// merge may keep add's array as base.
//
// The merge runs from the back, in place, so it needs no buffer. When add is
// much smaller than base, each of its slots is placed by a binary search
// within its directory cell (base[:i] still has its old layout there, so the
// old directory holds) and the runs of base between them move with copy: a
// merge costs about one memmove of base plus O(|add|) probes.
func (t *table) merge(add []slot, owned bool) {
	n, m := len(t.base), len(add)
	if m == 0 {
		return
	}
	if n == 0 {
		if owned {
			t.base = add
		} else {
			t.base = append(t.base, add...)
		}
		t.buildDir()
		return
	}
	base := slices.Grow(t.base, m)[:n+m]
	if m > n/16 {
		// Comparable sizes: a plain merge from the back.
		i, j := n-1, m-1
		for w := n + m - 1; j >= 0; w-- {
			if i >= 0 && cmpSlot(base[i], add[j]) > 0 {
				base[w] = base[i]
				i--
			} else {
				base[w] = add[j]
				j--
			}
		}
		t.base = base
		t.buildDir()
		return
	}
	shift := 64 - t.dirBits
	i := n // base[:i] not yet placed
	w := n + m
	for j := m - 1; j >= 0; j-- {
		a := add[j]
		c := a.key >> shift
		lo, hi := int(t.dir[c]), min(int(t.dir[c+1]), i)
		lo = min(lo, hi)
		// The first slot after a: cells before c hold smaller keys, cells
		// after it larger ones.
		p, _ := slices.BinarySearchFunc(base[lo:hi], a, cmpSlot)
		p += lo
		w -= i - p
		copy(base[w:], base[p:i])
		i = p
		w--
		base[w] = a
	}
	t.base = base
	t.updateDir(nil, add)
}

// sortSlots sorts a by (key, id), using tmp (at least as long) as scratch.
//
// It is an LSD radix sort on the key, one byte per pass, skipping the passes
// where every key has the same byte, followed by a sort by id of the runs of
// equal keys. For 1M random slots it is about twice as fast as slices.SortFunc.
func sortSlots(a, tmp []slot) {
	if len(a) < 256 {
		slices.SortFunc(a, cmpSlot)
		return
	}
	var counts [8][256]int
	for _, s := range a {
		k := s.key
		for b := range counts {
			counts[b][byte(k>>(8*b))]++
		}
	}
	first := a[0].key
	src, dst := a, tmp[:len(a)]
	for b := range counts {
		c := &counts[b]
		shift := 8 * b
		if c[byte(first>>shift)] == len(a) {
			continue // every key has this byte
		}
		sum := 0
		for i, n := range c {
			c[i] = sum
			sum += n
		}
		for _, s := range src {
			k := byte(s.key >> shift)
			dst[c[k]] = s
			c[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
	for i := 0; i < len(a); {
		j := i + 1
		for j < len(a) && a[j].key == a[i].key {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(a[i:j], cmpSlot)
		}
		i = j
	}
}
