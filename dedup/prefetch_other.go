//go:build !amd64 || !gc || purego

package dedup

import "unsafe"

// prefetch would bring the cache line holding p into the processor's
// caches; without the amd64 instruction it does nothing (prefetch_amd64.go).
func prefetch(unsafe.Pointer) {}
