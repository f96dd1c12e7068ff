//go:build (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm) && !purego

// On little-endian machines the bytes of a packed signature in a file are
// the memory image of its words (truncated after the last slot byte), so
// packing and unpacking are one memmove instead of a word at a time: reading
// default signatures (512 bytes) goes about twice as fast (BenchmarkRead).
// pack_other.go is the portable version (big-endian machines, -tags purego).

package sigfile

import (
	"slices"
	"unsafe"
)

// putPacked sets dst to the first len(dst) bytes of the little-endian
// words of sig (len(dst) ≤ 8·len(sig)).
func putPacked(dst []byte, sig []uint64) {
	copy(dst, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(sig))), 8*len(sig)))
}

// unpack appends the words of a packed signature: src holds them
// little-endian, the last one truncated after its last byte
// (len(src) > 8·(words−1)).
func unpack(dst []uint64, src []byte, words int) []uint64 {
	dst = slices.Grow(dst, words)[:words]
	unpackInto(dst, src)
	return dst
}

// unpackInto sets dst to the words packed in src (len(src) > 8·(len(dst)−1)).
func unpackInto(dst []uint64, src []byte) {
	dst[len(dst)-1] = 0
	copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 8*len(dst)), src)
}
