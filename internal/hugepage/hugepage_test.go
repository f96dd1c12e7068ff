package hugepage

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestSpan: the span is the whole huge pages within the bytes, checked
// against a walk over huge-page boundaries, at addresses on, just past and
// just before a boundary and at random ones, for sizes from 0 to a few huge
// pages.
func TestSpan(t *testing.T) {
	const h = Bytes
	r := rand.New(rand.NewPCG(5, 6))
	addrs := []uintptr{0, 1, h - 1, h, h + 1, 7*h - 4096, 1 << 40}
	for range 200 {
		addrs = append(addrs, uintptr(r.Uint64N(1<<47)))
	}
	sizes := []int{0, 1, 4096, h - 1, h, h + 1, 2*h - 1, 2 * h, 3*h + 5}
	for range 50 {
		sizes = append(sizes, r.IntN(6*h))
	}
	for _, a := range addrs {
		for _, n := range sizes {
			// The reference: the first boundary at or after a, then every
			// whole page that ends by a+n.
			first := (a + h - 1) / h * h
			wantOff, wantLen := 0, 0
			for b := first; b+h <= a+uintptr(n); b += h {
				if wantLen == 0 {
					wantOff = int(b - a)
				}
				wantLen += h
			}
			off, length := Span(a, n)
			if length != wantLen || (length > 0 && off != wantOff) {
				t.Fatalf("Span(%#x, %d) = %d, %d; want %d, %d", a, n, off, length, wantOff, wantLen)
			}
		}
	}
	// Advice on live memory changes nothing in it.
	b := make([]byte, 5*h+123)
	Advise(unsafe.Pointer(unsafe.SliceData(b)), len(b))
	for i := range b {
		b[i] = byte(i)
	}
	for i := range b {
		if b[i] != byte(i) {
			t.Fatalf("byte %d changed", i)
		}
	}
}
