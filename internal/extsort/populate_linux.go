package extsort

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault the range in,
// writable, in one call.
const madvPopulateWrite = 23

// populate faults in the pages of ws at once (madvise
// MADV_POPULATE_WRITE), where the kernel has it: a slab's 1,024 pages in one
// call instead of a fault each as the scatter first touches them. An error
// (an older kernel) leaves them to fault as before.
func populate(ws []uint64) {
	if len(ws) == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(ws))), 8*len(ws))
	// madvise wants a page-aligned start: the pages wholly inside ws.
	const page = 4096
	start := (uintptr(unsafe.Pointer(&b[0])) + page - 1) &^ (page - 1)
	off := int(start - uintptr(unsafe.Pointer(&b[0])))
	if off >= len(b) {
		return
	}
	n := (len(b) - off) &^ (page - 1)
	if n == 0 {
		return
	}
	_ = syscall.Madvise(b[off:off+n], madvPopulateWrite)
}
