package index

import (
	"math/bits"
	"sync/atomic"

	"github.com/zeebo/xxh3"
)

// DefaultFilterBytes is the default Options.FilterBytes: 32 MiB, 2^28 bits.
const DefaultFilterBytes = 32 << 20

// The id filter, the same structure keyed by a hash of the id, lets a
// check-and-insert of a new id skip the seek that looks for it. It takes a
// quarter of Options.FilterBytes.

// bucketFilter is a fixed-size bitmap over bucket keys: bit bk>>shift is set
// once any posting under a bucket key with those high bits has been written
// (or was found when the index was opened). A clear bit proves every bucket
// it covers empty, so a query skips their seeks: most buckets of a new
// document are empty, and a seek costs a few microseconds. Bits of emptied
// buckets stay set until the next open. Its size does not grow with the
// index; its benefit fades as the index grows (at 2^28 bits and 16 million
// postings, 6% of the bits are set; at 160 million, 45%).
//
// Ordering: a writer sets the bits of its postings before it applies its
// batch, and a reader tests bits only after it has made its iterator, so a
// posting the reader's view holds always has its bit set (sync/atomic is
// sequentially consistent).
type bucketFilter struct {
	words []atomic.Uint64
	shift uint
}

// newBucketFilter returns a filter of size bytes, rounded down to a power of
// two between 8 bytes and 512 MiB; nil for size ≤ 0 (no filter).
func newBucketFilter(size int) *bucketFilter {
	if size <= 0 {
		return nil
	}
	size = min(max(size, 8), 512<<20)
	nbits := uint(bits.Len(uint(size*8))) - 1 // log2 of the bit count
	return &bucketFilter{words: make([]atomic.Uint64, (1<<nbits)/64), shift: 32 - nbits}
}

// set marks bucket bk (left-aligned: its high 32 bits decide).
func (f *bucketFilter) set(bk uint64) {
	if f == nil {
		return
	}
	i := uint32(bk>>32) >> f.shift
	w := &f.words[i/64]
	bit := uint64(1) << (i % 64)
	if w.Load()&bit == 0 {
		w.Or(bit)
	}
}

// mayHold reports whether bucket bk may hold postings.
func (f *bucketFilter) mayHold(bk uint64) bool {
	if f == nil {
		return true
	}
	i := uint32(bk>>32) >> f.shift
	return f.words[i/64].Load()&(1<<(i%64)) != 0
}

// fill returns the fraction of bits set.
func (f *bucketFilter) fill() float64 {
	if f == nil {
		return 1
	}
	n := 0
	for i := range f.words {
		n += bits.OnesCount64(f.words[i].Load())
	}
	return float64(n) / float64(64*len(f.words))
}

// idFilterKey is the key of an id in the id filter.
func idFilterKey(id string) uint64 { return xxh3.HashString(id) } // the high 32 bits decide
