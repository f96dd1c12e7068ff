package dedup

import (
	"math/bits"
	"sync/atomic"
)

// The table of the exact-duplicate pass.
//
// hashTable maps 128-bit text hashes to document numbers by open addressing
// (linear probing) in one array of slots, where a Go map keyed by [2]uint64
// hashed every key again, kept its entries in buckets of eight with their
// own overhead and took a read lock for each lookup from the workers. Its
// one writer (the collector) inserts while any number of readers (the
// workers) look up, without locks: a slot's key is written before its
// document number, which is stored atomically and marks the slot as used,
// and slots are never emptied; when the table grows, the writer fills a new
// array and publishes it, so that a reader of the old one may miss only
// the keys added since, which costs the pass nothing but a signature made
// in vain (the collector decides; see exact.go).

// hashSlot is one slot of a hashTable: a key and its document number plus
// one (zero: empty).
type hashSlot struct {
	hi, lo uint64
	doc    atomic.Uint32
}

// hashSlotBytes is a slot's size.
const hashSlotBytes = 24

// hashSlots is one array of slots, a power of two of them.
type hashSlots struct {
	s     []hashSlot
	shift uint // 64 − log₂ len(s)
}

func newHashSlots(n int) *hashSlots {
	return &hashSlots{s: make([]hashSlot, n), shift: uint(64 - bits.TrailingZeros(uint(n)))}
}

// home is the first slot probed for key (hi, lo). The hashes are uniform
// already, but both words are mixed (Fibonacci hashing of their exclusive or, with
// one turned), so that keys equal in one word, by chance or by design of
// an input, do not share a slot.
func (h *hashSlots) home(hi, lo uint64) uint64 {
	return ((hi ^ bits.RotateLeft64(lo, 31)) * 0x9e3779b97f4a7c15) >> h.shift
}

// find returns the slot holding key (hi, lo) and true, or the empty slot
// where it would go and false.
func (h *hashSlots) find(hi, lo uint64) (*hashSlot, bool) {
	mask := uint64(len(h.s) - 1)
	for i := h.home(hi, lo); ; i = (i + 1) & mask {
		s := &h.s[i]
		if s.doc.Load() == 0 {
			return s, false
		}
		if s.hi == hi && s.lo == lo {
			return s, true
		}
	}
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
	s, ok := t.cur.Load().find(hi, lo)
	if !ok {
		return 0, false
	}
	return s.doc.Load() - 1, true
}

// getOrPut returns the document of key (hi, lo) and true if the table has
// it; else, when put is true, it adds the key with document doc, and
// returns false. Only one goroutine may call it (and reset).
func (t *hashTable) getOrPut(hi, lo uint64, doc uint32, put bool) (uint32, bool) {
	h := t.cur.Load()
	s, ok := h.find(hi, lo)
	if ok {
		return s.doc.Load() - 1, true
	}
	if !put {
		return 0, false
	}
	if (t.n+1)*4 > len(h.s)*3 {
		h = t.grow(h)
		s, _ = h.find(hi, lo)
	}
	s.hi, s.lo = hi, lo
	s.doc.Store(doc + 1) // publishes the key
	t.n++
	return 0, false
}

// grow copies the keys into an array twice as large and publishes it.
func (t *hashTable) grow(old *hashSlots) *hashSlots {
	h := newHashSlots(2 * len(old.s))
	for i := range old.s {
		o := &old.s[i]
		if d := o.doc.Load(); d != 0 {
			s, _ := h.find(o.hi, o.lo)
			s.hi, s.lo = o.hi, o.lo
			s.doc.Store(d)
		}
	}
	t.cur.Store(h)
	return h
}

// len is the number of keys held.
func (t *hashTable) len() int { return t.n }

// reset empties the table, keeping its array. Not safe while others read.
func (t *hashTable) reset() {
	if t.n == 0 {
		return
	}
	clear(t.cur.Load().s)
	t.n = 0
}

// bytes is the size of the table's array.
func (t *hashTable) bytes() int64 { return int64(len(t.cur.Load().s)) * hashSlotBytes }

// hashTableLimit is the most keys a table may hold within budget bytes: three
// quarters of the largest power of two of slots that fits (at least 1,024
// keys).
func hashTableLimit(budget int64) int {
	slots := max(budget/hashSlotBytes, 2048)
	return 3 << (bits.Len64(uint64(slots)) - 1) / 4
}
