//go:build linux

package hugepage

import (
	"syscall"
	"unsafe"
)

// Advise advises the kernel to back the whole 2 MiB pages within the n
// bytes at p with huge pages (madvise MADV_HUGEPAGE: honoured where
// transparent huge pages are enabled on request or always), so that random
// reads across an array of many megabytes, such as the exact pass's table,
// do not each miss the TLB as well as the cache. It is advice: an error
// (an old kernel, huge pages turned off) changes nothing but the speed.
// The memory must not have been touched yet for the kernel to fault it in
// as huge pages at once.
func Advise(p unsafe.Pointer, n int) {
	off, m := Span(uintptr(p), n)
	if m > 0 {
		_ = syscall.Madvise(unsafe.Slice((*byte)(p), n)[off:off+m], syscall.MADV_HUGEPAGE)
	}
}
