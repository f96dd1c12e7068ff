package dedup

// hugePageBytes is the size of a huge page (x86-64's and arm64's usual).
const hugePageBytes = 2 << 20

// hugeSpan returns the offset and length of the whole huge pages within the
// n bytes at address addr: the first offset whose address is a multiple of
// hugePageBytes, and the most bytes from it, in whole huge pages, before n.
// The length is 0 when the bytes hold no whole huge page.
func hugeSpan(addr uintptr, n int) (off, length int) {
	off = int((hugePageBytes - addr%hugePageBytes) % hugePageBytes)
	if off >= n {
		return 0, 0
	}
	return off, (n - off) / hugePageBytes * hugePageBytes
}
