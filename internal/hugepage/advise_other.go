//go:build !linux

package hugepage

import "unsafe"

// Advise would advise the kernel to back the memory with huge pages
// (advise_linux.go); elsewhere it does nothing.
func Advise(unsafe.Pointer, int) {}
