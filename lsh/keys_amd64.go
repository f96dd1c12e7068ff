//go:build amd64 && gc && !purego

package lsh

// An AVX-512 kernel for the band keys of 32-bit slots (keys_amd64.s).
//
// Why assembly: a band's key is a chain of xxHash64 rounds, two 64-bit
// multiplications each, and the scalar code is bound by the one multiplier
// (16 bands of 6 rows: 224 IMULs a signature, about 140 ns on the 2-vCPU
// AMD EPYC (Zen 4) of BENCHMARKS.md). VPMULLQ does eight bands' rounds at
// once; Go has no vector instructions outside assembly. The keys are the
// same bit for bit (TestAppendKeys32 compares both paths with the key
// function written out); other CPUs and the purego tag take the Go loops.

import "golang.org/x/sys/cpu"

// useAVX512 is whether keys0Packed32AVX512 may run: AVX-512 F for the
// permutes, rotations and masks, DQ for VPMULLQ (a variable for tests and
// benchmarks of both paths).
var useAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// maxVecWords is the most words a band (rows/2) the kernel takes: its
// permutes read w registers for each of a band's w words, w² in all.
const maxVecWords = 8

// permTable transposes eight bands of w words each, 8·w words in memory
// (w registers of eight), into w vectors, vector j holding word j of each
// band in lane k: word k·w + j, lane (k·w + j) mod 8 of register
// (k·w + j) / 8. Vector j is gathered by one VPERMQ of each register t
// with the indices idx[j] under the lane mask mask[j][t].
type permTable struct {
	idx  [maxVecWords][8]uint64
	mask [maxVecWords][maxVecWords]uint8
}

// permTables holds the permTable of each w from 1 to maxVecWords.
var permTables = func() (t [maxVecWords + 1]permTable) {
	for w := 1; w <= maxVecWords; w++ {
		for j := range w {
			for k := range 8 {
				q := k*w + j
				t[w].idx[j][k] = uint64(q % 8)
				t[w].mask[j][q/8] |= 1 << k
			}
		}
	}
	return t
}()

// keys0Packed32AVX512 writes the Probe = 0 keys of groups·8 bands of 2·w
// rows of 32-bit slots packed two a word (w words a band, the first band's
// at packed) to out, eight bands a group side by side in one vector. bases
// holds the bands' starts (bandBases0 from the first band on), t is
// permTables[w].
//
//go:noescape
func keys0Packed32AVX512(out, packed, bases *uint64, t *permTable, groups, w int)

// appendKeys0Packed32Vec writes the keys of as many whole groups of eight
// of the first bands as it can (even rows, at most 2·maxVecWords, bands
// within the precomputed starts) to out and returns how many bands it did.
func appendKeys0Packed32Vec(out, packed []uint64, b, r int) int {
	w := r / 2
	if !useAVX512 || r%2 != 0 || w > maxVecWords {
		return 0
	}
	groups := min(b, len(bandBases0)) / 8
	if groups == 0 {
		return 0
	}
	_ = out[groups*8-1]
	_ = packed[groups*8*w-1]
	keys0Packed32AVX512(&out[0], &packed[0], &bandBases0[0], &permTables[w], groups, w)
	return groups * 8
}
