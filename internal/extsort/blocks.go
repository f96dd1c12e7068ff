package extsort

import (
	"math/bits"
	"unsafe"

	"github.com/neardup/neardup/internal/hugepage"
)

// blockPool hands Partitioned its ranges' entry blocks, carved from slabs
// of up to 4 MiB, and takes back the blocks of a range that spilled for
// the next blocks of the same size, so that memory a spilled range let go
// is written again at once, not left to the garbage collector while fresh
// pages are faulted in for the ranges still growing (at 1 GiB and 5M
// documents: 205–244k page faults a run before, 174–202k with the pool).
//
// The slabs are not advised to be backed by huge pages (hugepage.Advise):
// on the 2-core test machine, a virtual machine whose balloon device
// reports free memory to the host, a fresh huge page cost four times the
// CPU of the 4 KiB pages it replaced to zero (the host faults each page of
// it in again), more than the 300k faults saved (BENCHMARKS.md, "The
// entry blocks' memory").
//
// Each new slab is faulted in by one madvise(MADV_POPULATE_WRITE) call
// (populate, Linux 5.14 on; elsewhere, or on an error, its pages fault as
// they are first written): at 5M short documents under 1 GiB the blocks'
// first touch was 113k of the run's 180k page faults, each a trap into the
// kernel from the scatter (storeLine); with it the run takes 65k. The
// pages are zeroed all the same, so system time falls by less: 1.64 ->
// 1.58 s (means of eight interleaved pairs), the whole run's CPU the same
// within the noise.
//
// The slabs are ordinary Go allocations (pointer-free, never scanned), so
// the runtime's memory limit sees them. Partitioned's budget counts the
// blocks in use; what the pool holds beyond them is bounded: a freed block
// is reused before a slab is carved further for one of its size, so the
// blocks carved of a size exceed those in use only by blocks of that size
// freed while none was asked for (at most the smaller first blocks of the
// ranges that spilled: 64 KiB a range, 16 MiB for all 256), plus the
// unused rest of the last slab (not touched, so not resident).
//
// Not safe for concurrent use: only Add (through full and spillPart) uses
// it.
type blockPool struct {
	slabLen int          // words in a new slab
	slab    []uint64     // the current slab's rest, not yet carved
	free    [][][]uint64 // freed blocks of 1<<i words, by i
	slabs   int          // slabs allocated (for tests)
	carved  int64        // words carved from slabs (for tests)
}

// slab sizes in bytes: up to slabMax, a budget's 1/16 at least
// (rounded to a power of two), so that a small budget does not reserve a
// slab many times its size.
const (
	slabMin = 64 << 10
	slabMax = 4 << 20
)

// newBlockPool returns a pool whose slabs suit a budget of hold bytes of
// blocks.
func newBlockPool(hold int64) blockPool {
	b := int64(slabMin)
	for b < slabMax && b < hold/16 {
		b *= 2
	}
	return blockPool{slabLen: int(b / 8)}
}

// class returns the free list index of a block of n words: n's log2 if
// it is a power of two, else −1 (such blocks, a small budget's staging
// ones, are not reused).
func class(n int) int {
	if n <= 0 || n&(n-1) != 0 {
		return -1
	}
	return bits.TrailingZeros(uint(n))
}

// get returns an empty block of capacity n (at most slabLen): a freed one
// of that size, or a new one carved from the current slab.
func (a *blockPool) get(n int) []uint64 {
	if c := class(n); c >= 0 && c < len(a.free) && len(a.free[c]) > 0 {
		l := a.free[c]
		b := l[len(l)-1]
		l[len(l)-1] = nil
		a.free[c] = l[:len(l)-1]
		return b[:0]
	}
	if len(a.slab) < n {
		// The rest of the slab, too short, to the free lists in the
		// largest power-of-two blocks it holds, so that nothing carved
		// is lost.
		for r := a.slab; len(r) >= partMinBlock; {
			m := 1 << (bits.Len(uint(len(r))) - 1)
			a.put(r[:0:m])
			r = r[m:]
		}
		a.slab = make([]uint64, max(a.slabLen, n))
		populate(a.slab)
		a.slabs++
	}
	b := a.slab[:0:n]
	a.slab = a.slab[n:]
	a.carved += int64(n)
	return b
}

// put takes back a block no longer used, for get to give out again.
func (a *blockPool) put(b []uint64) {
	c := class(cap(b))
	if c < 0 {
		return
	}
	for len(a.free) <= c {
		a.free = append(a.free, nil)
	}
	a.free[c] = append(a.free[c], b[:0])
}

// reset drops every slab, for the garbage collector.
func (a *blockPool) reset() {
	*a = blockPool{slabLen: a.slabLen}
}

// makeHuge returns make([]Wide, n), advised to be backed by huge pages:
// the reading iterators' sort buffers, megabytes each, unlike the slabs
// written again for every range they sort, at random places (the radix
// sort's scatter), where a huge page spares a TLB miss each time; their
// first touch is paid once.
func makeHuge(n int) []Wide {
	b := make([]Wide, n)
	hugepage.Advise(unsafe.Pointer(unsafe.SliceData(b)), n*int(unsafe.Sizeof(Wide{})))
	return b
}
