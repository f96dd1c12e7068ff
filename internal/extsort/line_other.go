//go:build !amd64 || !gc || purego

package extsort

import "unsafe"

// storeLine copies the line of 64 bytes at src to dst; on amd64 it does
// so with non-temporal stores (line_amd64.go).
func storeLine(dst, src unsafe.Pointer) {
	*(*[lineWords]uint64)(dst) = *(*[lineWords]uint64)(src)
}

// storeFence does nothing: storeLine's stores are ordinary ones here.
func storeFence() {}

// lineAligned reports whether storeLine may write at p: always.
func lineAligned(unsafe.Pointer) bool { return true }
