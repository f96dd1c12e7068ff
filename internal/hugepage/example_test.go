package hugepage_test

import (
	"fmt"
	"unsafe"

	"github.com/neardup/neardup/internal/hugepage"
)

// Advise a large array before touching it; Span tells which bytes of it
// are whole huge pages.
func Example() {
	b := make([]uint64, 1<<20) // 8 MiB
	hugepage.Advise(unsafe.Pointer(unsafe.SliceData(b)), len(b)*8)
	_, n := hugepage.Span(0, 5*hugepage.Bytes+100)
	fmt.Println(n / hugepage.Bytes)
	// Output: 5
}
