//go:build !linux

package dedup

import "unsafe"

// hugePages would advise the kernel to back the memory with huge pages
// (hugepages_linux.go); elsewhere it does nothing.
func hugePages(unsafe.Pointer, int) {}
