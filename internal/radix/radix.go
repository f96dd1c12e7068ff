// Package radix sorts slices of uint64 with a radix sort that reuses a
// caller-provided scratch buffer.
//
// It exists for the batch pipeline, which sorts tens of millions of packed
// (band key | document) entries and (a | b) candidate pairs: there a radix
// sort is several times faster than a comparison sort and, given a scratch
// buffer, allocates nothing. It is not a general-purpose sort: it handles
// only uint64 in ascending order.
//
// # Algorithm
//
// Sort first ORs and ANDs all values together; an 8-bit digit in which no
// bit varies is never sorted on. Inputs of up to [LSDMax] elements are then
// sorted least-significant digit first, one stable counting-sort pass per
// varying digit, ping-ponging between data and scratch. Larger inputs get one
// most-significant-digit pass on the highest varying digit, which splits
// them into up to 256 buckets small enough to stay in cache, and each bucket
// is sorted recursively the same way. Every pass also checks its histogram
// and skips a digit that is constant within the (sub)input.
// [SortKeyParallel] splits the first most-significant-digit pass and the
// bucket sorts over goroutines, with the same result.
package radix

import (
	"math/bits"
	"slices"
)

// SmallCutoff is the input length below which [Sort] uses [slices.Sort]:
// for short inputs the fixed cost of the histograms (8 × 256 counters)
// outweighs the linear passes. On a 2-vCPU AMD EPYC (Go 1.26) slices.Sort
// of random values wins at 1000 elements (≈17 vs 23 µs), ties near 2000 and
// loses at 4000 (≈180 vs 110 µs).
const SmallCutoff = 2048

// LSDMax is the largest (sub)input sorted by LSD passes alone. Above it a
// most-significant-digit pass first splits the input into buckets (about
// LSDMax/256 = 1024 elements or more each) whose LSD passes run in cache;
// a pure LSD sort of 16M values streams 128 MiB through memory on every
// pass. Measured on a 2-vCPU AMD EPYC: with 1<<16, 100K values took 50 ns
// each (buckets too small); with 1<<18, 25 ns; at 16M, 33 ns with the split
// versus 38–42 ns without.
const LSDMax = 1 << 18

// Sort sorts data in ascending order in place.
//
// scratch is working memory: if len(scratch) < len(data), Sort allocates a
// new buffer of len(data) instead. Sort returns the scratch buffer it used
// (scratch itself, resliced to len(data), or the new one), so a caller that
// sorts repeatedly can keep it and sort without allocating. The contents of
// scratch are undefined after the call; scratch must not overlap data.
// Inputs shorter than [SmallCutoff] are sorted with [slices.Sort] and leave
// scratch untouched.
//
// Sort is deterministic and safe for concurrent use on disjoint slices.
func Sort(data, scratch []uint64) []uint64 {
	return SortKey(data, scratch, 0)
}

// SortKey reorders data so that v>>shift is ascending, which is cheaper than
// [Sort] when the low shift bits need no ordering: whole 8-bit digits below
// shift are skipped. Elements with equal v>>shift end up in an unspecified
// (but deterministic) relative order. SortKey(data, scratch, 0) is
// Sort(data, scratch); shift must be less than 64.
//
// Scratch handling, determinism and concurrency are as for [Sort].
func SortKey(data, scratch []uint64, shift uint) []uint64 {
	if shift >= 64 {
		panic("radix: SortKey shift must be less than 64")
	}
	n := len(data)
	if n < SmallCutoff {
		if shift == 0 {
			slices.Sort(data)
		} else {
			slices.SortFunc(data, func(a, b uint64) int {
				a, b = a>>shift, b>>shift
				switch {
				case a < b:
					return -1
				case a > b:
					return 1
				}
				return 0
			})
		}
		return scratch
	}
	if len(scratch) < n {
		scratch = make([]uint64, n)
	}
	scratch = scratch[:n]

	or, and := uint64(0), ^uint64(0)
	for _, v := range data {
		or |= v
		and &= v
	}
	varying := (or ^ and) &^ (1<<shift - 1)
	if varying == 0 {
		return scratch
	}
	top := (bits.Len64(varying) - 1) / digitBits
	sortDigits(data, scratch, top, varying, true)
	return scratch
}

const digitBits = 8

// sortDigits sorts a by its digits top..0 (only those with a bit set in
// varying), using b as scratch of the same length. The result is left in a
// if inA, else in b.
func sortDigits(a, b []uint64, top int, varying uint64, inA bool) {
	n := len(a)
	if n <= LSDMax {
		lsd(a, b, top, varying, inA)
		return
	}
	for top >= 0 && (varying>>(digitBits*top))&0xff == 0 {
		top--
	}
	if top < 0 {
		if !inA {
			copy(b, a)
		}
		return
	}
	shift := uint(digitBits * top)
	var next [256]int // next[x] is the next output slot for digit x
	for _, v := range a {
		next[(v>>shift)&0xff]++
	}
	if next[(a[0]>>shift)&0xff] == n {
		sortDigits(a, b, top-1, varying, inA)
		return
	}
	sum := 0
	for x, c := range next {
		next[x] = sum
		sum += c
	}
	for _, v := range a {
		x := (v >> shift) & 0xff
		b[next[x]] = v
		next[x]++
	}
	// Bucket x is now b[start:next[x]]; sort each into the side the caller wants.
	start := 0
	for _, end := range next {
		switch {
		case end-start == 1:
			if inA {
				a[start] = b[start]
			}
		case end-start > 1:
			if top == 0 {
				if inA {
					copy(a[start:end], b[start:end])
				}
			} else {
				sortDigits(b[start:end], a[start:end], top-1, varying, !inA)
			}
		}
		start = end
	}
}

// lsd sorts a by its digits top..0 with one stable counting-sort pass per
// digit that varies, using b as scratch; the result is left in a if inA,
// else in b.
func lsd(a, b []uint64, top int, varying uint64, inA bool) {
	n := len(a)
	if n < SmallCutoff {
		// Recursion from a large input can produce small buckets.
		// The digits above top are equal within a, so sorting whole values is right.
		slices.Sort(a)
		if !inA {
			copy(b, a)
		}
		return
	}
	// One read pass builds all histograms; unrolled, it is cheaper than a
	// loop over only the digits needed.
	var counts [64 / digitBits][256]uint32
	for _, v := range a {
		counts[0][uint8(v)]++
		counts[1][uint8(v>>8)]++
		counts[2][uint8(v>>16)]++
		counts[3][uint8(v>>24)]++
		counts[4][uint8(v>>32)]++
		counts[5][uint8(v>>40)]++
		counts[6][uint8(v>>48)]++
		counts[7][uint8(v>>56)]++
	}
	src, dst := a, b
	for d := 0; d <= top; d++ {
		shift := uint(digitBits * d)
		if (varying>>shift)&0xff == 0 {
			continue
		}
		c := &counts[d]
		if int(c[uint8(a[0]>>shift)]) == n {
			continue // constant in this (sub)input: the order is unchanged
		}
		var sum uint32
		for x, cnt := range c {
			c[x] = sum
			sum += cnt
		}
		for _, v := range src {
			x := uint8(v >> shift)
			dst[c[x]] = v
			c[x]++
		}
		src, dst = dst, src
	}
	want := a
	if !inA {
		want = b
	}
	if &src[0] != &want[0] {
		copy(want, src)
	}
}
