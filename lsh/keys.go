package lsh

import (
	"fmt"
	"math/bits"
)

// Constants of the band-key hash: the five 64-bit primes of xxHash64.
const (
	prime1 = 0x9E3779B185EBCA87
	prime2 = 0xC2B2AE3D27D4EB4F
	prime3 = 0x165667B19E3779F9
	prime5 = 0x27D4EB2F165667C5
)

// round is xxHash64's accumulator round: rotl64(acc + x·prime2, 31)·prime1.
func round(acc, x uint64) uint64 {
	return bits.RotateLeft64(acc+x*prime2, 31) * prime1
}

// avalanche is xxHash64's final mix.
func avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// AppendKeys appends the document's band keys to dst and returns the
// extended slice: KeysPerDoc() keys, band by band. slots holds the
// signature's slot values, one uint64 per slot (b-bit and 32-bit slots
// widened, not packed); only the first Bands·Rows are read, and AppendKeys
// panics if there are fewer. It allocates only if dst lacks capacity, does
// not retain slots, and is safe for concurrent use.
//
// # Key function
//
// All arithmetic is on uint64 modulo 2⁶⁴. With the xxHash64 primes
//
//	P1 = 0x9E3779B185EBCA87, P2 = 0xC2B2AE3D27D4EB4F,
//	P3 = 0x165667B19E3779F9, P5 = 0x27D4EB2F165667C5,
//	round(a, x) = rotl64(a + x·P2, 31)·P1
//	final(h)    = h ^= h>>33; h *= P2; h ^= h>>29; h *= P3; h ^= h>>32
//
// the key of band i (0-based) with the rows in the ascending position list
// O left out is
//
//	h = round(P5, i)
//	h = round(h, len(O))
//	for each p in O:              h = round(h, p)
//	for j = 0 … Rows−1, j ∉ O:    h = round(h, slots[i·Rows + j])
//	key = final(h)
//
// With Probe = 0, O is empty and band i has the single key
// final(round…(round(round(P5, i), 0), slots…)). With Probe = m ≥ 1, band i
// has one key for each m-subset O of 0…Rows−1, in lexicographic order of O
// (for m = 1: O = {0}, {1}, …, {Rows−1}); the full-band key is not emitted,
// since agreeing on all rows implies agreeing on every subset. The band
// index and the left-out positions are mixed in first, so equal rows in
// different bands, or under different left-out positions, give different
// keys. Two documents share a key of band i exactly when (hash collisions
// aside) they agree on at least Rows−m of the band's rows.
func (p Params) AppendKeys(dst, slots []uint64) []uint64 {
	b, r := p.Bands, p.Rows
	if b < 1 || r < 1 || p.Probe < 0 || p.Probe > MaxProbe || p.Probe > 0 && p.Probe >= r {
		panic(fmt.Sprintf("lsh: AppendKeys with invalid Params %+v", p))
	}
	if len(slots) < b*r {
		panic(fmt.Sprintf("lsh: AppendKeys got %d slots; Params %v read %d", len(slots), p, b*r))
	}
	switch p.Probe {
	case 0:
		for i := range b {
			h := round(round(prime5, uint64(i)), 0)
			for _, v := range slots[i*r : (i+1)*r] {
				h = round(h, v)
			}
			dst = append(dst, avalanche(h))
		}
	case 1:
		for i := range b {
			band := slots[i*r : (i+1)*r]
			base := round(round(prime5, uint64(i)), 1)
			for o := range r {
				h := round(base, uint64(o))
				for j, v := range band {
					if j != o {
						h = round(h, v)
					}
				}
				dst = append(dst, avalanche(h))
			}
		}
	case 2:
		for i := range b {
			band := slots[i*r : (i+1)*r]
			base := round(round(prime5, uint64(i)), 2)
			for o1 := range r {
				h1 := round(base, uint64(o1))
				for o2 := o1 + 1; o2 < r; o2++ {
					h := round(h1, uint64(o2))
					for j, v := range band {
						if j != o1 && j != o2 {
							h = round(h, v)
						}
					}
					dst = append(dst, avalanche(h))
				}
			}
		}
	}
	return dst
}
