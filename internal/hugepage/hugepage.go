package hugepage

// Bytes is the size of a huge page (x86-64's and arm64's usual).
const Bytes = 2 << 20

// Span returns the offset and length of the whole huge pages within the
// n bytes at address addr: the first offset whose address is a multiple of
// Bytes, and the most bytes from it, in whole huge pages, before n.
// The length is 0 when the bytes hold no whole huge page.
func Span(addr uintptr, n int) (off, length int) {
	off = int((Bytes - addr%Bytes) % Bytes)
	if off >= n {
		return 0, 0
	}
	return off, (n - off) / Bytes * Bytes
}
