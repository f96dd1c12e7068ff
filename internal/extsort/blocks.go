package extsort

import (
	"math/bits"
	"unsafe"

	"github.com/neardup/neardup/internal/hugepage"
)

// blockPool hands Partitioned its ranges' entry blocks, carved from slabs
// of many megabytes advised to be backed by huge pages before they are
// first touched (hugepage.Advise), and takes back the blocks of a range
// that spilled for the next blocks of the same size.
//
// Why: at a budget that holds every entry, the blocks (1.2 GB at 5M
// documents) were each a Go allocation of fresh memory, faulted in 4 KiB
// at a time as Add first wrote it: 300k page faults, each a kernel entry
// and a page zeroed, the larger budget's whole excess of system time.
// A 2 MiB page faults once for 512 of those.
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
	slabLen int        // entries in a new slab
	slab    []Wide     // the current slab's rest, not yet carved
	free    [][][]Wide // freed blocks of 1<<i entries, by i
	slabs   int        // slabs allocated (for tests)
	carved  int64      // entries carved from slabs (for tests)
}

// slab sizes in bytes: up to slabMax, a budget's 1/16 at least
// (rounded to a power of two), so that a small budget does not reserve a
// slab many times its size.
const (
	slabMin = 64 << 10
	slabMax = 64 << 20
)

// newSlab returns n entries (untouched) advised to be backed by huge
// pages. Slabs of slabAlignMin bytes or more start at a huge page's
// boundary: a Go allocation is aligned to 8 KiB only, and an unaligned
// slab's partial huge pages at either end, faulted 4 KiB at a time, were
// most of its faults (512 for 2 MiB of edges). The 2 MiB allocated more
// for it are never touched, so never resident, but the runtime's memory
// limit counts them: 3 % of a 64 MiB slab.
func newSlab(n int) []Wide {
	const size = int(unsafe.Sizeof(Wide{}))
	pad := 0
	if n*size >= slabAlignMin {
		pad = hugepage.Bytes / size
	}
	b := make([]Wide, n+pad)
	if pad > 0 {
		off, _ := hugepage.Span(uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b)*size)
		b = b[off/size : off/size+n : off/size+n]
	}
	// Before the first touch: make leaves fresh memory untouched.
	hugepage.Advise(unsafe.Pointer(unsafe.SliceData(b)), n*size)
	return b
}

// slabAlignMin is the smallest slab aligned to a huge page.
const slabAlignMin = 8 << 20

// newBlockPool returns a pool whose slabs suit a budget of hold bytes of
// blocks.
func newBlockPool(hold int64) blockPool {
	b := int64(slabMin)
	for b < slabMax && b < hold/16 {
		b *= 2
	}
	return blockPool{slabLen: int(b / 16)}
}

// class returns the free list index of a block of n entries: n's log2 if
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
func (a *blockPool) get(n int) []Wide {
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
		a.slab = newSlab(max(a.slabLen, n))
		a.slabs++
	}
	b := a.slab[:0:n]
	a.slab = a.slab[n:]
	a.carved += int64(n)
	return b
}

// put takes back a block no longer used, for get to give out again.
func (a *blockPool) put(b []Wide) {
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

// makeHuge returns make([]Wide, n), advised to be backed by huge pages
// (the reading iterators' sort buffers, megabytes each).
func makeHuge(n int) []Wide {
	b := make([]Wide, n)
	hugepage.Advise(unsafe.Pointer(unsafe.SliceData(b)), n*int(unsafe.Sizeof(Wide{})))
	return b
}
