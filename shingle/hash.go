package shingle

import (
	"encoding/binary"
	"math/bits"

	"github.com/zeebo/xxh3"
)

// This file holds inlinable copies of the xxh3-64 short-input paths (inputs of
// 1 to 16 bytes) so that the per-token and per-character-gram hashing in the
// hot loops avoids a function call and the library's length dispatch. They
// compute exactly xxh3.HashSeed; TestXXH3Short and FuzzXXH3Short check every
// length against the library.

// xxh3 secret words used by the short paths (the first bytes of the default
// kSecret, read little-endian).
const (
	key64_008 = 0x1cad21f72c81017c
	key64_016 = 0xdb979083e96dd4de
	key64_024 = 0x1f67b3b7a4a44072
	key64_032 = 0x78e5c0cc4ee679cb
	key64_040 = 0x2172ffcc7dd05a82
	key64_048 = 0x8e2443f7744608b8
	key32_000 = 0xbe4ba423
	key32_004 = 0x396cfeb8
	prime64_2 = 14029467366897019727
	prime64_3 = 1609587929392839161
)

// rrmxmxMul is the multiplier of xxh3's rrmxmx mixer.
const rrmxmxMul = 0x9fb21c651e98df25

func rrmxmx(h, n uint64) uint64 {
	h ^= bits.RotateLeft64(h, 49) ^ bits.RotateLeft64(h, 24)
	h *= rrmxmxMul
	h ^= (h >> 35) + n
	h *= rrmxmxMul
	h ^= h >> 28
	return h
}

func avalancheSmall(x uint64) uint64 {
	x ^= x >> 33
	x *= prime64_2
	x ^= x >> 29
	x *= prime64_3
	x ^= x >> 32
	return x
}

func avalanche(x uint64) uint64 {
	x ^= x >> 37
	x *= 0x165667919e3779f9
	x ^= x >> 32
	return x
}

// seed48 is the seed-dependent key of the xxh3 4-to-8-byte path.
func seed48(seed uint64) uint64 {
	s := seed ^ uint64(bits.ReverseBytes32(uint32(seed)))<<32
	return (key64_008 ^ key64_016) - s
}

// hash4to8 is xxh3 of an input of n (4..8) bytes whose first four bytes,
// read little-endian, are first and whose last four are last; k48 = seed48(seed).
func hash4to8(first, last uint32, n, k48 uint64) uint64 {
	return rrmxmx((uint64(last)+uint64(first)<<32)^k48, n)
}

// xxh3Seed returns xxh3.HashSeed(p, seed), inlining inputs of 1..16 bytes.
func xxh3Seed(p []byte, seed, k48 uint64) uint64 {
	n := len(p)
	switch {
	case n > 16 || n == 0:
		return xxh3.HashSeed(p, seed)
	case n > 8:
		lo := binary.LittleEndian.Uint64(p) ^ ((key64_024 ^ key64_032) + seed)
		hi := binary.LittleEndian.Uint64(p[n-8:]) ^ ((key64_040 ^ key64_048) - seed)
		h, l := bits.Mul64(lo, hi)
		return avalanche(uint64(n) + bits.ReverseBytes64(lo) + hi + (h ^ l))
	case n >= 4:
		return hash4to8(binary.LittleEndian.Uint32(p), binary.LittleEndian.Uint32(p[n-4:]), uint64(n), k48)
	default:
		c := uint64(p[0])<<16 | uint64(p[n>>1])<<24 | uint64(p[n-1]) | uint64(n)<<8
		return avalancheSmall(c ^ (uint64(key32_000^key32_004) + seed))
	}
}

// fmix64 is the MurmurHash3 64-bit finaliser, applied to the polynomial
// combination of unit hashes to make a word or token n-gram's feature.
func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// polyP is the odd multiplier of the polynomial that combines the hashes of
// the n units of a word or token n-gram (the 64-bit golden ratio).
const polyP = 0x9e3779b97f4a7c15
