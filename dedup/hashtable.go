package dedup

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/neardup/neardup/internal/hugepage"
)

// The table of the exact-duplicate pass.
//
// hashTable maps 128-bit text hashes to document numbers by open addressing
// (linear probing) in one array of slots, where a Go map keyed by [2]uint64
// hashed every key again, kept its entries in buckets of eight with their
// own overhead and took a read lock for each lookup from the workers. Its
// one writer (the collector) inserts while any number of readers (the
// workers) look up, without locks: a slot's key and document number are
// written before its tag (hashSlots), which is published by a release
// store (setTag) and marks the slot as used, and slots are never emptied; when the table grows, the writer fills a new
// array and publishes it, so that a reader of the old one may miss only
// the keys added since, which costs the pass nothing but a signature made
// in vain (the collector decides; see exact.go).
//
// A slot holds 96 bits of the key, not all 128 (16 bytes a slot with the
// document number, where the whole key took 24): the key's fingerprint
// fp = hi ⊕ rotl(lo, 31), from which its home slot and tag are made (so
// that the table can grow without the keys), and the low 32 bits of lo;
// the map (hi, lo) → (fp, lo mod 2³²) is the key's projection on 96 bits.
// Two different keys, which are hashes uniform on 128 bits, agree on those
// 96 bits with probability 2⁻⁹⁶, so a run whose n lookups each compare
// with at most m keys held mistakes one text for another with probability
// at most n·m·2⁻⁹⁶: under 3·10⁻¹² at 10⁹ documents (two lookups each)
// against a table of 10⁸ (the 128-bit hash itself collides with probability
// about N²·2⁻¹²⁹ for N documents).

// hashSlot is one slot of a hashTable: 96 bits of a key and its document
// number plus one (zero: empty). Its tag (hashSlots) publishes it: a reader
// reads a slot only once it has seen the slot's tag, which the writer stores
// after the slot.
type hashSlot struct {
	fp  uint64 // hi ^ rotl(lo, 31): the key's home and tag are made from it
	lo  uint32 // lo's low 32 bits
	doc uint32
}

// hashSlotBytes is a slot's size, its tag byte included (see hashSlots).
const hashSlotBytes = int64(unsafe.Sizeof(hashSlot{})) + 1

// fingerprint returns the slot's words of key (hi, lo).
func fingerprint(hi, lo uint64) (uint64, uint32) {
	return hi ^ bits.RotateLeft64(lo, 31), uint32(lo)
}

// hashSlots is one array of slots, any number of them, with a tag byte for
// each: 0 for an empty slot, else 0x80 | seven bits of the key's mixed
// fingerprint (apart from the bits that choose its home slot). A probe reads
// the tags, 64 of them in a cache line where the slots take 16 bytes each,
// and a slot only where its tag matches: a key that is not there (most
// documents are not copies) costs a read of the tags alone, whose array (a
// 17th of the table) stays in the processor's caches and TLB where the
// slots do not. The tags go four to an atomic word: the writer stores a
// slot's key and document, then its tag word, so that a reader who sees the
// tag sees the key (see hashTable).
type hashSlots struct {
	s    []hashSlot
	tags []atomic.Uint32
	n    uint64 // len(s)
	gen  uint32 // which of its table's arrays it is (hashTable.grow numbers them)
}

func newHashSlots(n int) *hashSlots {
	h := &hashSlots{s: make([]hashSlot, n), tags: make([]atomic.Uint32, (n+3)/4), n: uint64(n)}
	if n >= hugeSlots {
		// Probes land anywhere in the arrays: in 4 KiB pages each would
		// miss the TLB too (in a virtual machine, a walk of two page
		// tables), more than the cache miss itself.
		hugepage.Advise(unsafe.Pointer(unsafe.SliceData(h.s)), n*int(unsafe.Sizeof(hashSlot{})))
		hugepage.Advise(unsafe.Pointer(unsafe.SliceData(h.tags)), len(h.tags)*4)
	}
	return h
}

// hugeSlots is the fewest slots for which a table's arrays are given huge
// pages (hugepage.Advise): 16 MiB of slots, 1 MiB of tags.
const hugeSlots = 1 << 20

// home returns the first slot probed for a key of fingerprint fp and the
// key's tag: the fingerprint is mixed (Fibonacci hashing) and its high bits
// mapped to a slot by multiplication (so that the array's size need not be
// a power of two), the tag taken from bits below those that decide the slot.
func (h *hashSlots) home(fp uint64) (uint64, uint8) {
	x := fp * 0x9e3779b97f4a7c15
	i, _ := bits.Mul64(x, h.n)
	return i, 0x80 | uint8(x>>24)&0x7f
}

// tag returns slot i's tag.
func (h *hashSlots) tag(i uint64) uint8 { return uint8(h.tags[i>>2].Load() >> (i & 3 * 8)) }

// setTag sets slot i's tag to t, publishing the slot (a release store:
// the slot's words, stored before, are seen by any reader that sees the
// tag). Only the writer calls it.
func (h *hashSlots) setTag(i uint64, t uint8) {
	w := &h.tags[i>>2]
	sh := i & 3 * 8
	storeRelease(w, w.Load()&^(0xff<<sh)|uint32(t)<<sh)
}

// find returns the number of the slot holding the key of fingerprint
// (fp, lo) and true, or the number of the empty slot where it would go and
// false, and the key's tag.
func (h *hashSlots) find(fp uint64, lo uint32) (uint64, uint8, bool) {
	i, tag := h.home(fp)
	for {
		switch h.tag(i) {
		case 0:
			return i, tag, false
		case tag:
			if s := &h.s[i]; s.fp == fp && s.lo == lo {
				return i, tag, true
			}
		}
		if i++; i == h.n {
			i = 0
		}
	}
}

// put stores fingerprint (fp, lo) with document number plus one d1 in empty
// slot i and then, publishing it, its tag. Only the writer calls it.
func (h *hashSlots) put(i uint64, tag uint8, fp uint64, lo uint32, d1 uint32) {
	s := &h.s[i]
	s.fp, s.lo, s.doc = fp, lo, d1
	h.setTag(i, tag)
}

// hashTable is a set of 128-bit keys with a document number each, filled by
// one goroutine and read by any number at once (see above). Its zero value
// is not ready: use newHashTable or newBoundedHashTable.
type hashTable struct {
	cur atomic.Pointer[hashSlots]
	// cur, which the readers load for each lookup, has a cache line of its
	// own: n, which the writer stores for each key added, beside it made
	// each reader's load a miss on a line the writer's core held
	// (false sharing).
	_        [cacheLine - 8]byte
	n        int // keys held (the writer's)
	maxSlots int // the largest array it grows to; 0: no limit
	_        [cacheLine - 16]byte
}

// cacheLine is the size of the processor's cache line (amd64, arm64).
const cacheLine = 64

// maxLoad is the fraction of a table's slots in use past which it grows (and
// which a bounded table holds at most: hashTableLimit), as numerator over
// 8. The tags keep probes short at that load: an absent key's probe, about
// 32 slots on average at 7/8, reads one or two cache lines of tags and, in
// a quarter of such probes, one slot whose tag matches by chance.
const maxLoad = 7

// newHashTable returns an empty table of capacity slots at first (at least
// 16); it doubles whenever it is seven eighths full.
func newHashTable(capacity int) *hashTable {
	t := &hashTable{}
	t.cur.Store(newHashSlots(max(16, capacity)))
	return t
}

// newBoundedHashTable returns an empty table that grows by doubling to
// hashTableSlots(budget) slots at most, from a size that doubles to that
// exactly (so that the last growth holds the arrays of half and all of it:
// 1.5 times the budget). It holds hashTableLimit(budget) keys within it.
func newBoundedHashTable(budget int64) *hashTable {
	n := hashTableSlots(budget)
	first := n
	for first > 4096 {
		first = (first + 1) / 2
	}
	t := &hashTable{maxSlots: n}
	t.cur.Store(newHashSlots(first))
	return t
}

// get returns the document of key (hi, lo). Safe for concurrent use with
// one goroutine's put and with other gets.
func (t *hashTable) get(hi, lo uint64) (uint32, bool) {
	h := t.cur.Load()
	fp, l := fingerprint(hi, lo)
	i, _, ok := h.find(fp, l)
	if !ok {
		return 0, false
	}
	return h.s[i].doc - 1, true
}

// lookup is get, and where a key not found would go: the empty slot its
// probe ended at, in the array of number gen (see putAt). Safe for
// concurrent use, as get is.
func (t *hashTable) lookup(hi, lo uint64) (doc uint32, ok bool, slot uint64, gen uint32) {
	h := t.cur.Load()
	fp, l := fingerprint(hi, lo)
	i, _, ok := h.find(fp, l)
	if !ok {
		return 0, false, i, h.gen
	}
	return h.s[i].doc - 1, true, i, h.gen
}

// absentAt reports whether a key whose lookup found it absent, its probe
// ending at empty slot slot of array gen, is still absent and would go to
// that slot: the array is the same (no growth since) and the slot still
// empty. Slots are never emptied, so the probe's slots before it are still
// full, and the key, had it been added since, would be in that slot. Only
// the writer calls it.
func (t *hashTable) absentAt(slot uint64, gen uint32) bool {
	h := t.cur.Load()
	return h.gen == gen && slot < h.n && h.tag(slot) == 0
}

// putAt adds key (hi, lo), which absentAt(slot, gen) has just reported
// absent, with document doc: getOrPut without its probe, unless the
// table must grow first (it then probes the new array). Only the writer
// calls it.
func (t *hashTable) putAt(hi, lo uint64, doc uint32, slot uint64) {
	h := t.cur.Load()
	if t.n+1 >= int(h.n) || uint64(t.n+1)*8 > h.n*maxLoad && (t.maxSlots == 0 || int(h.n) < t.maxSlots) {
		t.getOrPut(hi, lo, doc, true)
		return
	}
	fp, l := fingerprint(hi, lo)
	_, tag := h.home(fp)
	h.put(slot, tag, fp, l, doc+1)
	t.n++
}

// getOrPut returns the document of key (hi, lo) and true if the table has
// it; else, when put is true, it adds the key with document doc, and
// returns false. Only one goroutine may call it (and reset). A bounded
// table full to its largest array takes keys past maxLoad: its callers
// stop at hashTableLimit.
func (t *hashTable) getOrPut(hi, lo uint64, doc uint32, put bool) (uint32, bool) {
	h := t.cur.Load()
	fp, l := fingerprint(hi, lo)
	i, tag, ok := h.find(fp, l)
	if ok {
		return h.s[i].doc - 1, true
	}
	if !put || t.n+1 >= int(h.n) { // never full: a probe ends at an empty slot
		return 0, false
	}
	if uint64(t.n+1)*8 > h.n*maxLoad && (t.maxSlots == 0 || int(h.n) < t.maxSlots) {
		n := 2 * int(h.n)
		if t.maxSlots > 0 {
			n = min(n, t.maxSlots)
		}
		h = t.grow(h, n)
		i, tag, _ = h.find(fp, l)
	}
	h.put(i, tag, fp, l, doc+1)
	t.n++
	return 0, false
}

// reserve makes the table's array large enough for keys keys within
// maxLoad, or as large as a bounded table's may be, at once (keys held
// are copied into it, as when it grows): a table sized before the keys
// arrive does not double on its way, each growth clearing a new array and
// copying the keys into it (at 1 GiB, 11 growths from 2,570 slots to
// 5,263,440, which fault in as much again as the last array). It never
// shrinks the array. Only the writer calls it. A table's lookups and
// decisions do not depend on its array's size: only its cost does.
func (t *hashTable) reserve(keys int) {
	h := t.cur.Load()
	n := (keys*8+maxLoad-1)/maxLoad + 1 // past ⌈keys·8/7⌉: a probe ends at an empty slot
	if t.maxSlots > 0 {
		n = min(n, t.maxSlots)
	}
	if n <= int(h.n) {
		return
	}
	t.grow(h, n)
}

// grow copies the keys into an array of n slots and publishes it.
func (t *hashTable) grow(old *hashSlots, n int) *hashSlots {
	h := newHashSlots(n)
	h.gen = old.gen + 1
	for i := range old.s {
		o := &old.s[i]
		if d := o.doc; d != 0 {
			j, tag, _ := h.find(o.fp, o.lo)
			h.put(j, tag, o.fp, o.lo, d)
		}
	}
	t.cur.Store(h)
	return h
}

// touch reads the home slot and tag of each key of hashes (two words a
// key, as signed.hashes holds them), so that the getOrPut of those keys
// that follows finds them in the processor's caches: the loads of this
// loop do not wait for each other, so their cache misses overlap, where
// getOrPut waits for each in turn (its insert's stores wait for the
// slot's line). It returns a sum of what it read, for its loads not to be
// left out. Only the writer calls it.
//
//go:noinline
func (t *hashTable) touch(hashes []uint64) uint64 {
	h := t.cur.Load()
	var sum uint64
	for i := 0; i+1 < len(hashes); i += 2 {
		fp, _ := fingerprint(hashes[i], hashes[i+1])
		j, _ := h.home(fp)
		sum += uint64(h.tags[j>>2].Load()) + h.s[j].fp
	}
	return sum
}

// prefetch starts bringing the tags and home slot of key (hi, lo) into the
// processor's caches and returns at once (see prefetch), so that a get of
// the key made a while later, after other work, finds them there. Safe for
// concurrent use, as get is.
func (t *hashTable) prefetch(hi, lo uint64) {
	h := t.cur.Load()
	fp, _ := fingerprint(hi, lo)
	i, _ := h.home(fp)
	prefetch(unsafe.Pointer(&h.tags[i>>2]))
}

// len is the number of keys held.
func (t *hashTable) len() int { return t.n }

// reset empties the table, keeping its array. Not safe while others read.
func (t *hashTable) reset() {
	if t.n == 0 {
		return
	}
	h := t.cur.Load()
	clear(h.s)
	clear(h.tags)
	t.n = 0
}

// bytes is the size of the table's array.
func (t *hashTable) bytes() int64 {
	h := t.cur.Load()
	return int64(len(h.s))*int64(unsafe.Sizeof(hashSlot{})) + int64(len(h.tags))*4
}

// hashTableSlots is the most slots a bounded table of budget bytes has (at
// least 2,048).
func hashTableSlots(budget int64) int {
	return int(max(budget/hashSlotBytes, 2048))
}

// hashTableLimit is the most keys a bounded table of budget bytes holds:
// seven eighths of its slots.
func hashTableLimit(budget int64) int {
	return hashTableSlots(budget) * maxLoad / 8
}
