package extsort

import (
	"errors"
	"syscall"
	"testing"
	"unsafe"
)

// TestPopulate: a fresh slab populated is faulted in by the one call, so
// writing all of it then takes (almost) no faults, where an unpopulated one
// takes one a page; its words stay zero, and slices not page-aligned, short
// or empty are handled.
func TestPopulate(t *testing.T) {
	probe := make([]uint64, 1<<19)
	if err := syscall.Madvise(unsafe.Slice((*byte)(unsafe.Pointer(&probe[0])), 4096), madvPopulateWrite); errors.Is(err, syscall.EINVAL) {
		t.Skip("the kernel has no MADV_POPULATE_WRITE")
	}
	const words = 1 << 20 // 8 MiB: 2,048 pages
	touch := func(ws []uint64) int64 {
		before := minorFaults(t)
		for i := 0; i < len(ws); i += 512 {
			ws[i] = uint64(i) + 1
		}
		return minorFaults(t) - before
	}
	// Fresh anonymous mappings, whose pages nothing has touched (a Go
	// allocation may reuse memory already faulted in).
	fresh := func() []uint64 {
		m, err := syscall.Mmap(-1, 0, 8*words, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Munmap(m) })
		return unsafe.Slice((*uint64)(unsafe.Pointer(&m[0])), words)
	}
	unpopulated := touch(fresh())
	ws := fresh()
	populate(ws)
	for i := 0; i < len(ws); i += 97 {
		if ws[i] != 0 {
			t.Fatalf("word %d is %d after populate; want 0", i, ws[i])
		}
	}
	after := touch(ws)
	if unpopulated < words/512/2 {
		t.Skipf("a fresh mapping took %d faults for %d pages (transparent huge pages?): nothing to compare", unpopulated, words/512)
	}
	if after > unpopulated/8 {
		t.Errorf("writing a populated slab took %d faults; an unpopulated one %d", after, unpopulated)
	}
	for _, n := range []int{0, 1, 511, 513, 4097} {
		b := make([]uint64, n+1)
		populate(b[1:]) // not page-aligned
		for i, v := range b {
			if v != 0 {
				t.Fatalf("n=%d: word %d is %d", n, i, v)
			}
		}
	}
}
