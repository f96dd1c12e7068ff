//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm) || purego

// The portable packing of signatures, a word at a time; pack_le.go copies
// memory images on little-endian machines.

package sigfile

import (
	"encoding/binary"
	"slices"
)

// putPacked sets dst to the first len(dst) bytes of the little-endian
// words of sig (len(dst) ≤ 8·len(sig)).
func putPacked(dst []byte, sig []uint64) {
	for i, v := range sig {
		if len(dst) >= 8*(i+1) {
			binary.LittleEndian.PutUint64(dst[8*i:], v)
			continue
		}
		for j := 8 * i; j < len(dst); j++ {
			dst[j] = byte(v >> (8 * (j - 8*i)))
		}
		return
	}
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
	full := len(src) / 8
	for i := range full {
		dst[i] = binary.LittleEndian.Uint64(src[8*i:])
	}
	if full < len(dst) {
		var v uint64
		for j, c := range src[8*full:] {
			v |= uint64(c) << (8 * j)
		}
		dst[full] = v
	}
}
