package dedup

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// The table of the exact-duplicate pass.
//
// hashTable maps 128-bit text hashes to document numbers by open addressing
// (linear probing) in one array of slots, where a Go map keyed by [2]uint64
// hashed every key again, kept its entries in buckets of eight with their
// own overhead and took a read lock for each lookup from the workers. Its
// one writer (the collector) inserts while any number of readers (the
// workers) look up, without locks: a slot's key and document number are
// written before its tag (hashSlots), which is stored atomically and marks
// the slot as used, and slots are never emptied; when the table grows, the writer fills a new
// array and publishes it, so that a reader of the old one may miss only
// the keys added since, which costs the pass nothing but a signature made
// in vain (the collector decides; see exact.go).

// hashSlot is one slot of a hashTable: a key and its document number plus
// one (zero: empty). Its tag (hashSlots) publishes it: a reader reads a
// slot only once it has seen the slot's tag, which the writer stores after
// the slot.
type hashSlot struct {
	hi, lo uint64
	doc    uint32
}

// hashSlotBytes is a slot's size, its tag byte included (see hashSlots).
const hashSlotBytes = 25

// hashSlots is one array of slots, a power of two of them, with a tag byte
// for each: 0 for an empty slot, else 0x80 | seven bits of the key's hash
// (the seven below those of its home slot). A probe reads the tags, 64 of
// them in a cache line where the slots take 24 bytes each, and a slot only
// where its tag matches: a key that is not there (most documents are not
// copies) costs a read of the tags alone, whose array (a 25th of the
// table) stays in the processor's caches and TLB where the slots do not.
// The tags go four to an atomic word: the writer stores a slot's key and
// document, then its tag word, so that a reader who sees the tag sees the
// key (see hashTable).
type hashSlots struct {
	s     []hashSlot
	tags  []atomic.Uint32
	shift uint // 64 − log₂ len(s)
}

func newHashSlots(n int) *hashSlots {
	return &hashSlots{s: make([]hashSlot, n), tags: make([]atomic.Uint32, (n+3)/4), shift: uint(64 - bits.TrailingZeros(uint(n)))}
}

// home returns the first slot probed for key (hi, lo) and the key's tag. The
// hashes are uniform already, but both words are mixed (Fibonacci hashing
// of their exclusive or, with one turned), so that keys equal in one word,
// by chance or by design of an input, do not share a slot.
func (h *hashSlots) home(hi, lo uint64) (uint64, uint8) {
	x := (hi ^ bits.RotateLeft64(lo, 31)) * 0x9e3779b97f4a7c15
	return x >> h.shift, 0x80 | uint8(x>>(h.shift-7))&0x7f
}

// tag returns slot i's tag.
func (h *hashSlots) tag(i uint64) uint8 { return uint8(h.tags[i>>2].Load() >> (i & 3 * 8)) }

// setTag sets slot i's tag to t. Only the writer calls it.
func (h *hashSlots) setTag(i uint64, t uint8) {
	w := &h.tags[i>>2]
	sh := i & 3 * 8
	w.Store(w.Load()&^(0xff<<sh) | uint32(t)<<sh)
}

// find returns the number of the slot holding key (hi, lo) and true, or the
// number of the empty slot where it would go and false, and the key's tag.
func (h *hashSlots) find(hi, lo uint64) (uint64, uint8, bool) {
	mask := uint64(len(h.s) - 1)
	i, tag := h.home(hi, lo)
	for ; ; i = (i + 1) & mask {
		switch h.tag(i) {
		case 0:
			return i, tag, false
		case tag:
			if s := &h.s[i]; s.hi == hi && s.lo == lo {
				return i, tag, true
			}
		}
	}
}

// put stores key (hi, lo) with document number plus one d1 in empty slot i
// and then, publishing it, its tag. Only the writer calls it.
func (h *hashSlots) put(i uint64, tag uint8, hi, lo uint64, d1 uint32) {
	s := &h.s[i]
	s.hi, s.lo, s.doc = hi, lo, d1
	h.setTag(i, tag)
}

// hashTable is a set of 128-bit keys with a document number each, filled by
// one goroutine and read by any number at once (see above). Its zero value
// is not ready: use newHashTable.
type hashTable struct {
	cur atomic.Pointer[hashSlots]
	n   int // keys held (the writer's)
}

// newHashTable returns an empty table of capacity slots at first (a power
// of two, at least 16); it doubles whenever it is three quarters full.
func newHashTable(capacity int) *hashTable {
	t := &hashTable{}
	t.cur.Store(newHashSlots(max(16, 1<<bits.Len(uint(capacity-1)))))
	return t
}

// get returns the document of key (hi, lo). Safe for concurrent use with
// one goroutine's put and with other gets.
func (t *hashTable) get(hi, lo uint64) (uint32, bool) {
	h := t.cur.Load()
	i, _, ok := h.find(hi, lo)
	if !ok {
		return 0, false
	}
	return h.s[i].doc - 1, true
}

// getOrPut returns the document of key (hi, lo) and true if the table has
// it; else, when put is true, it adds the key with document doc, and
// returns false. Only one goroutine may call it (and reset).
func (t *hashTable) getOrPut(hi, lo uint64, doc uint32, put bool) (uint32, bool) {
	h := t.cur.Load()
	i, tag, ok := h.find(hi, lo)
	if ok {
		return h.s[i].doc - 1, true
	}
	if !put {
		return 0, false
	}
	if (t.n+1)*4 > len(h.s)*3 {
		h = t.grow(h)
		i, tag, _ = h.find(hi, lo)
	}
	h.put(i, tag, hi, lo, doc+1)
	t.n++
	return 0, false
}

// grow copies the keys into an array twice as large and publishes it.
func (t *hashTable) grow(old *hashSlots) *hashSlots {
	h := newHashSlots(2 * len(old.s))
	for i := range old.s {
		o := &old.s[i]
		if d := o.doc; d != 0 {
			j, tag, _ := h.find(o.hi, o.lo)
			h.put(j, tag, o.hi, o.lo, d)
		}
	}
	t.cur.Store(h)
	return h
}

// touch reads the home slot and tag of each key of hashes (two words a
// key, as signed.hashes holds them), so that the getOrPut of those keys
// that follows finds them in the processor's caches: the loads of this
// loop do not wait for each other, so their cache misses overlap, where
// getOrPut waits for each in turn (its insert's atomic store waits for the
// slot's line). It returns a sum of what it read, for its loads not to be
// left out. Only the writer calls it.
//
//go:noinline
func (t *hashTable) touch(hashes []uint64) uint64 {
	h := t.cur.Load()
	var sum uint64
	for i := 0; i+1 < len(hashes); i += 2 {
		j, _ := h.home(hashes[i], hashes[i+1])
		sum += uint64(h.tags[j>>2].Load()) + h.s[j].hi
	}
	return sum
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

// hashTableLimit is the most keys a table may hold within budget bytes: three
// quarters of the largest power of two of slots that fits (at least 1,024
// keys).
func hashTableLimit(budget int64) int {
	slots := max(budget/hashSlotBytes, 2048)
	return 3 << (bits.Len64(uint64(slots)) - 1) / 4
}
