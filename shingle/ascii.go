package shingle

import (
	"encoding/binary"
	"math/bits"

	"github.com/dchest/siphash"
	"github.com/zeebo/xxh3"
)

// This file holds the ASCII fast paths: normalisation, the word and token
// loop, and the character n-gram loops, each in pure Go; simd_amd64.s holds
// vector versions of the normalisation and of the character 4- to 8-gram
// loops. They compute exactly what the general Unicode path computes; the
// tests compare all of them with a slow reference implementation of the
// definition (reference_test.go) and with each other (ascii_test.go).

// Byte-lane constants for SWAR ("SIMD within a register") code: one 64-bit
// word holds eight bytes, little-endian.
const (
	lsb    = 0x0101010101010101 // the low bit of each byte
	msb    = 0x8080808080808080 // the high bit of each byte
	spaces = 0x2020202020202020 // eight ASCII spaces
)

// foldASCII normalises an ASCII text into s.norm and returns its length and
// true; it returns false as soon as it meets a byte ≥ 0x80, and the caller
// takes the Unicode path instead.
//
// Where the CPU allows, foldBlocks does 32-byte blocks with vector
// instructions (simd_amd64.s); the rest goes byte by byte through the
// tables, where separators collapse without a branch: a separator that
// follows a separator is written but not kept. (Eight-bytes-at-a-time SWAR
// code in Go was no faster than this loop: its constants and masks cost as
// many instructions as the table lookups.)
func (s *Shingler) foldASCII(text []byte) (int, bool) {
	s.grow(len(text))
	d := s.norm[:len(text)+slack]
	i, j := 0, 0
	prev := uint8(1) // a separator before the text drops leading separators
	if s.foldTab != nil {
		i, j, prev = foldBlocks(d, text, s.foldTab, prev)
	}
	for _, b := range text[i:] {
		if b >= 0x80 {
			return 0, false
		}
		sp := s.sep[b]
		d[j] = s.out[b]
		j += int(1 - sp&prev)
		prev = sp
	}
	if prev == 1 && j > 0 {
		j-- // drop the trailing separator
	}
	s.pad(j)
	return j, true
}

// unitBlock is how many unit hashes units computes before it combines them.
const unitBlock = 256

// units emits the word or token n-grams of buf (s.norm[:len(buf)]): units
// separated by exactly one space, none leading or trailing. Each unit is
// hashed once; an n-gram's feature is fmix64 of the polynomial
// Σ t_j·P^(w−1−j) of its w unit hashes, kept rolling so each position costs
// O(1). With b nil the features are appended to dst; otherwise they go
// straight into b's one-permutation bins (b.n counts them) and dst is
// returned unchanged.
//
// It works in two passes per block of units, hashing the units (unitHashes),
// then rolling and emitting the n-grams: two tight loops whose few live
// values stay in registers run faster than one loop that does both.
func (s *Shingler) units(dst []uint64, buf []byte, b *binState) []uint64 {
	n := s.spec.N
	th := s.unitHash[:]
	kept := 0  // th[:kept]: the last min(count, n−1) hashes of earlier blocks
	count := 0 // units so far
	var r uint64
	for i := 0; i < len(buf); {
		var got int
		if s.keyed {
			got, i = s.keyedUnitHashes(th[kept:], buf, i)
		} else if got, i = s.unitHashesVec(th[kept:], buf, i); got == 0 {
			var rest []byte
			got, rest = unitHashes(th[kept:], s.norm[i:len(buf)+slack], s.seed)
			i = len(buf) + slack - len(rest)
		}
		count += got
		seg := th[:kept+got]
		// seg[q] is unit count−len(seg)+q; it completes an n-gram when
		// q ≥ n−1, the n-gram whose oldest unit is seg[q−n+1].
		q := kept
		for ; q < n-1 && q < len(seg); q++ {
			r = r*polyP + seg[q]
		}
		if q < len(seg) {
			if b != nil {
				r = addGrams(seg, q, n, r, s.powN, b)
			} else {
				for ; q < len(seg); q++ {
					r = r*polyP + seg[q]
					if len(dst) == cap(dst) {
						dst = s.flush(dst, len(seg)-q+(len(buf)-i)/2)
					}
					dst = append(dst, fmix64(r))
					r -= seg[q-n+1] * s.powN
				}
			}
		}
		kept = min(len(seg), n-1)
		copy(th, seg[len(seg)-kept:])
	}
	if count > 0 && count < n {
		// Fewer units than n: one feature, of all of them (r was never
		// reduced).
		if b != nil {
			b.add(fmix64(r))
		} else {
			dst = s.one(dst, fmix64(r))
		}
	}
	return dst
}

// addGrams is the second pass of units into bins: for q from q0 on it adds
// seg[q] to the rolling polynomial r, bins the n-gram's feature and drops
// seg[q−n+1] (times powN = P^(n−1)) from r, which it returns.
func addGrams(seg []uint64, q0, n int, r, powN uint64, b *binState) uint64 {
	mins, mult, shift := b.mins, b.mult, b.shift
	if len(mins) == 0 || q0 < n-1 {
		return r
	}
	mask := uint64(len(mins) - 1) // proves the bin index in range
	old := seg[q0-n+1:]
	if b.kept == b.n && b.kept+len(seg)-q0 <= len(b.feats) {
		// The set is still short enough to keep its features for
		// densification: the same loop, storing each feature.
		feats := b.feats[b.kept : b.kept+len(seg)-q0]
		for k, t := range seg[q0:] {
			r = r*polyP + t
			f := fmix64(r)
			feats[k] = f
			v := f * mult
			i := v >> shift & mask
			mins[i] = min(v, mins[i])
			r -= old[k] * powN
		}
		b.kept += len(seg) - q0
		b.n += len(seg) - q0
		return r
	}
	for k, t := range seg[q0:] {
		r = r*polyP + t
		v := fmix64(r) * mult
		i := v >> shift & mask
		mins[i] = min(v, mins[i])
		r -= old[k] * powN
	}
	b.n += len(seg) - q0
	return r
}

// unitHashes writes the xxh3 hashes of the units at the start of p (units
// separated by single spaces, the text followed by slack spaces) to th until
// th is full or the text ends, and returns how many it wrote and the rest of
// p, which starts with the next unit.
//
// A unit of up to 7 bytes is hashed from the 8 bytes loaded at its start,
// which also show where it ends. Both xxh3 paths for 1 to 3 and 4 to 8 bytes
// are computed and one is picked with a conditional move: word lengths are too
// random for a branch to predict, and a misprediction costs more than the
// second hash. Longer units take longUnitHash.
func unitHashes(th []uint64, p []byte, seed uint64) (int, []byte) {
	k48, k13 := seed48(seed), uint64(key32_000^key32_004)+seed
	k := 0
	// p shrinks from the front; the text ends where only the slack is left.
	for ; len(p) > slack && k < len(th); k++ {
		w := binary.LittleEndian.Uint64(p)
		x := w ^ spaces
		m := (x - lsb) &^ x & msb // the high bit of the first space's byte
		if m == 0 {
			th[k], p = longUnitHash(p, seed)
			continue
		}
		z := uint64(bits.TrailingZeros64(m)) // 8·len + 7
		l := z >> 3
		// 4 to 8 bytes: rrmxmx of the first and last four (hash4to8).
		h := rrmxmx((w>>((z-39)&63)&0xffffffff+w<<32)^k48, l)
		// 1 to 3 bytes: the first, middle and last byte (xxh3Seed), the
		// first two being bytes 0 and 1, or 0 twice for one byte.
		first := w & 0xffff
		if l == 1 {
			first = w & 0xff * 0x101
		}
		c := first<<16 | w>>((z-15)&63)&0xff | l<<8
		if c := avalancheSmall(c ^ k13); l < 4 {
			h = c
		}
		th[k] = h
		p = p[l+1:]
	}
	return k, p
}

// longUnitHash returns the hash of the unit of 8 bytes or more at the start
// of p and the rest of p after it. It is kept out of unitHashes so that its
// code does not crowd the registers of the common path.
//
//go:noinline
func longUnitHash(p []byte, seed uint64) (uint64, []byte) {
	j := 8
	for {
		x := binary.LittleEndian.Uint64(p[j:]) ^ spaces
		if m := (x - lsb) &^ x & msb; m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			break
		}
		j += 8
	}
	var h uint64
	switch w := binary.LittleEndian.Uint64(p); {
	case j == 8:
		h = hash4to8(uint32(w), uint32(w>>32), 8, seed48(seed))
	case j <= 16: // xxh3Seed's 9-to-16-byte path
		lo := w ^ (key64_024 ^ key64_032 + seed)
		hi := binary.LittleEndian.Uint64(p[j-8:]) ^ (key64_040 ^ key64_048 - seed)
		u, l := bits.Mul64(lo, hi)
		h = avalanche(uint64(j) + bits.ReverseBytes64(lo) + hi + (u ^ l))
	default:
		h = xxh3.HashSeed(p[:j], seed)
	}
	return h, p[j+1:]
}

// keyedUnitHashes is unitHashes for keyed specs: SipHash of each unit.
func (s *Shingler) keyedUnitHashes(th []uint64, buf []byte, i int) (int, int) {
	k := 0
	for ; i < len(buf) && k < len(th); k++ {
		j := i
		for {
			x := binary.LittleEndian.Uint64(s.norm[j:]) ^ spaces
			if m := (x - lsb) &^ x & msb; m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
			j += 8
		}
		th[k] = siphash.Hash(s.k0, s.k1, buf[i:j])
		i = j + 1
	}
	return k, i
}

// charASCII emits the character n-grams of an ASCII buf: the xxh3 of each
// window of n bytes. For 4 ≤ n ≤ 8 (unkeyed) charHashes computes them from
// 8-byte loads.
func (s *Shingler) charASCII(dst []uint64, buf []byte) []uint64 {
	n := s.spec.N
	if len(buf) <= n {
		return s.one(dst, s.hash(buf))
	}
	total := len(buf) - n + 1
	fast := !s.keyed && n >= 4 && n <= 8
	p := s.norm[:len(buf)+slack]
	for i := 0; i < total; {
		if len(dst) == cap(dst) {
			dst = s.flush(dst, total-i)
		}
		// Fill as much of dst's spare capacity as this text needs.
		out := dst[len(dst):min(cap(dst), len(dst)+total-i)]
		if fast {
			q := p[i : i+len(out)+slack]
			k := 0
			if s.charK != nil {
				k = charHashesVec(out, q, s.charK)
			}
			charHashes(out[k:], q[k:], n, s.k48)
		} else {
			for k := range out {
				out[k] = s.hash(buf[i+k : i+k+n])
			}
		}
		dst = dst[:len(dst)+len(out)]
		i += len(out)
	}
	return dst
}

// hashWindow is xxh3 of an n-byte window, 4 ≤ n ≤ 8, from the 8 bytes w
// loaded at its start: sh = 8(n−4) and ln = n.
func hashWindow(w uint64, sh uint, ln, k48 uint64) uint64 {
	return rrmxmx((w>>sh&0xffffffff+w<<32)^k48, ln)
}

// charHashes sets out[k] to the xxh3 of p[k:k+n], 4 ≤ n ≤ 8, from one 8-byte
// load per window; p must hold len(out)+slack bytes. The loop does four
// windows per iteration so that their independent multiplications overlap.
func charHashes(out []uint64, p []byte, n int, k48 uint64) {
	sh, ln := uint(8*(n-4)), uint64(n)
	p = p[:len(out)+slack]
	k := 0
	for ; k+4 <= len(out) && k+11 <= len(p); k += 4 {
		q := p[k : k+11]
		out[k] = hashWindow(binary.LittleEndian.Uint64(q[0:]), sh, ln, k48)
		out[k+1] = hashWindow(binary.LittleEndian.Uint64(q[1:]), sh, ln, k48)
		out[k+2] = hashWindow(binary.LittleEndian.Uint64(q[2:]), sh, ln, k48)
		out[k+3] = hashWindow(binary.LittleEndian.Uint64(q[3:]), sh, ln, k48)
	}
	for ; k < len(out) && k+8 <= len(p); k++ {
		out[k] = hashWindow(binary.LittleEndian.Uint64(p[k:k+8]), sh, ln, k48)
	}
}

// charBins adds the character n-grams of an ASCII buf (s.norm[:len(buf)]),
// 4 ≤ n ≤ 8, unkeyed, straight to b's bins: the loop of charHashes with the
// bin update of each window inlined.
func (s *Shingler) charBins(buf []byte, b *binState) {
	n := s.spec.N
	total := len(buf) - n + 1
	sh, ln, k48 := uint(8*(n-4)), uint64(n), s.k48
	mins, mult, shift := b.mins, b.mult, b.shift
	if len(mins) == 0 {
		return
	}
	mask := uint64(len(mins) - 1) // proves the bin index in range
	k := 0
	if s.charK != nil {
		k = charBinsVec(s.norm[:total+slack], total, s.charK, mins, mult, shift)
	}
	p := s.norm[:total+7] // window k is p[k:k+8]
	for ; k+4 <= total && k+11 <= len(p); k += 4 {
		q := p[k : k+11]
		v0 := hashWindow(binary.LittleEndian.Uint64(q[0:]), sh, ln, k48) * mult
		v1 := hashWindow(binary.LittleEndian.Uint64(q[1:]), sh, ln, k48) * mult
		v2 := hashWindow(binary.LittleEndian.Uint64(q[2:]), sh, ln, k48) * mult
		v3 := hashWindow(binary.LittleEndian.Uint64(q[3:]), sh, ln, k48) * mult
		i0, i1, i2, i3 := v0>>shift&mask, v1>>shift&mask, v2>>shift&mask, v3>>shift&mask
		mins[i0] = min(v0, mins[i0])
		mins[i1] = min(v1, mins[i1])
		mins[i2] = min(v2, mins[i2])
		mins[i3] = min(v3, mins[i3])
	}
	for ; k+8 <= len(p); k++ {
		v := hashWindow(binary.LittleEndian.Uint64(p[k:k+8]), sh, ln, k48) * mult
		i := v >> shift & mask
		mins[i] = min(v, mins[i])
	}
	b.n += total
}
