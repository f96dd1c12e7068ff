//go:build linux

package corpus

import (
	"os"
	"syscall"
)

// Mapped windows of the inputs for CopyKept (copykept.go), on Linux
// only: MAP_POPULATE sets up a window's page table entries in one call
// rather than a page fault every 16 pages (the kernel's fault-around), and
// other systems copy through read(2) as before.

// canMap reports whether mapWindowOf works on this system.
const canMap = true

// mapWindowOf maps n bytes of f from off (a multiple of the page size),
// read only, its pages present.
func mapWindowOf(f *os.File, off int64, n int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), off, n, syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
}

// unmapWindow undoes mapWindowOf; nil is no window.
func unmapWindow(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return syscall.Munmap(b)
}
