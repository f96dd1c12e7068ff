package lsh

import (
	"fmt"
	"math/bits"
	"slices"
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
	b, r := p.check("AppendKeys")
	if len(slots) < b*r {
		panic(fmt.Sprintf("lsh: AppendKeys got %d slots; Params %v read %d", len(slots), p, b*r))
	}
	if p.Probe == 0 {
		return appendKeys0(dst, slots, b, r)
	}
	for i := range b {
		dst = p.appendBandProbe(dst, slots[i*r:(i+1)*r], i)
	}
	return dst
}

// AppendKeys32 is AppendKeys of slots of 32 bits packed two a word, the
// lower half first (a minhash.Signature of 32-bit slots as it is: slot j
// is uint32(packed[j/2] >> (32·(j%2)))), which it reads in place. Its keys
// are those of AppendKeys of the unpacked slots, bit for bit; it panics if
// packed holds fewer than Bands·Rows slots. It allocates only if dst lacks
// capacity or, under Probe ≥ 1, for bands of more than 64 rows.
func (p Params) AppendKeys32(dst, packed []uint64) []uint64 {
	b, r := p.check("AppendKeys32")
	if len(packed) < (b*r+1)/2 {
		panic(fmt.Sprintf("lsh: AppendKeys32 got %d words of slots; Params %v read %d slots", len(packed), p, b*r))
	}
	if p.Probe == 0 {
		return appendKeys0Packed32(dst, packed, b, r)
	}
	var buf [64]uint64
	band := buf[:0]
	if r > len(buf) {
		band = make([]uint64, 0, r)
	}
	for i := range b {
		band = band[:0]
		for j := i * r; j < (i+1)*r; j++ {
			band = append(band, slot32(packed, j))
		}
		dst = p.appendBandProbe(dst, band, i)
	}
	return dst
}

// check panics if p is not a valid banding for name, and returns its bands
// and rows.
func (p Params) check(name string) (b, r int) {
	b, r = p.Bands, p.Rows
	if b < 1 || r < 1 || p.Probe < 0 || p.Probe > MaxProbe || p.Probe > 0 && p.Probe >= r {
		panic(fmt.Sprintf("lsh: %s with invalid Params %+v", name, p))
	}
	return b, r
}

// slot32 is slot j of 32-bit slots packed two a word.
func slot32(packed []uint64, j int) uint64 {
	return uint64(uint32(packed[j>>1] >> (uint(j&1) << 5)))
}

// appendBandProbe appends the keys of band i, whose rows are band, under
// Probe 1 or 2.
func (p Params) appendBandProbe(dst, band []uint64, i int) []uint64 {
	r := len(band)
	switch p.Probe {
	case 1:
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
	case 2:
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
	return dst
}

// bandBases0 holds, for the first bands, the start of a band's hash under
// Probe = 0, round(round(P5, i), 0), which depends on the band only.
var bandBases0 = func() (t [256]uint64) {
	for i := range t {
		t[i] = round(round(prime5, uint64(i)), 0)
	}
	return t
}()

// bandBase0 is the start of band i's hash under Probe = 0.
func bandBase0(i int) uint64 {
	if i < len(bandBases0) {
		return bandBases0[i]
	}
	return round(round(prime5, uint64(i)), 0)
}

// appendKeys0 is AppendKeys under Probe = 0 for b bands of r rows. A
// band's rounds form one chain of dependent multiplications, so four
// bands are hashed side by side: their chains overlap in the processor,
// where one band at a time waited for each multiplication.
func appendKeys0(dst, slots []uint64, b, r int) []uint64 {
	n := len(dst)
	dst = slices.Grow(dst, b)[:n+b]
	out := dst[n:]
	i := 0
	for ; i+4 <= b; i += 4 {
		s := slots[i*r : (i+4)*r]
		s0, s1, s2, s3 := s[:r], s[r:2*r], s[2*r:3*r], s[3*r:4*r]
		h0, h1, h2, h3 := bandBase0(i), bandBase0(i+1), bandBase0(i+2), bandBase0(i+3)
		for j := range s0 {
			h0 = round(h0, s0[j])
			h1 = round(h1, s1[j])
			h2 = round(h2, s2[j])
			h3 = round(h3, s3[j])
		}
		o := out[i : i+4 : i+4]
		o[0], o[1], o[2], o[3] = avalanche(h0), avalanche(h1), avalanche(h2), avalanche(h3)
	}
	for ; i < b; i++ {
		h := bandBase0(i)
		for _, v := range slots[i*r : (i+1)*r] {
			h = round(h, v)
		}
		out[i] = avalanche(h)
	}
	return dst
}

// appendKeys0Packed32 is appendKeys0 of 32-bit slots packed two a word
// (AppendKeys32).
func appendKeys0Packed32(dst, packed []uint64, b, r int) []uint64 {
	n := len(dst)
	dst = slices.Grow(dst, b)[:n+b]
	out := dst[n:]
	packed = packed[:(b*r+1)/2]
	i := appendKeys0Packed32Vec(out, packed, b, r)
	if r%2 == 0 {
		// Every band starts a word: its rows are r/2 whole words.
		w := r / 2
		for ; i+4 <= b; i += 4 {
			p := packed[i*w : (i+4)*w]
			p0, p1, p2, p3 := p[:w], p[w:2*w], p[2*w:3*w], p[3*w:4*w]
			h0, h1, h2, h3 := bandBase0(i), bandBase0(i+1), bandBase0(i+2), bandBase0(i+3)
			for j := range p0 {
				v0, v1, v2, v3 := p0[j], p1[j], p2[j], p3[j]
				h0 = round(round(h0, v0&0xffffffff), v0>>32)
				h1 = round(round(h1, v1&0xffffffff), v1>>32)
				h2 = round(round(h2, v2&0xffffffff), v2>>32)
				h3 = round(round(h3, v3&0xffffffff), v3>>32)
			}
			o := out[i : i+4 : i+4]
			o[0], o[1], o[2], o[3] = avalanche(h0), avalanche(h1), avalanche(h2), avalanche(h3)
		}
	}
	for ; i+4 <= b; i += 4 {
		j0, j1, j2, j3 := i*r, (i+1)*r, (i+2)*r, (i+3)*r
		h0, h1, h2, h3 := bandBase0(i), bandBase0(i+1), bandBase0(i+2), bandBase0(i+3)
		for range r {
			h0 = round(h0, slot32(packed, j0))
			h1 = round(h1, slot32(packed, j1))
			h2 = round(h2, slot32(packed, j2))
			h3 = round(h3, slot32(packed, j3))
			j0, j1, j2, j3 = j0+1, j1+1, j2+1, j3+1
		}
		o := out[i : i+4 : i+4]
		o[0], o[1], o[2], o[3] = avalanche(h0), avalanche(h1), avalanche(h2), avalanche(h3)
	}
	for ; i < b; i++ {
		h := bandBase0(i)
		for j := i * r; j < (i+1)*r; j++ {
			h = round(h, slot32(packed, j))
		}
		out[i] = avalanche(h)
	}
	return dst
}
