//go:build amd64 && gc && !purego

package dedup

import "unsafe"

// prefetch asks the processor to bring the cache line holding p into its
// caches (PREFETCHT0) and returns at once: unlike a load, the instruction
// does not hold up the ones after it while the line is fetched, so the
// miss overlaps whatever the caller does next. It is assembly because Go
// has no prefetch intrinsic outside the runtime.
//
//go:noescape
func prefetch(p unsafe.Pointer)
