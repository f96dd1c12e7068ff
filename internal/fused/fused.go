// Package fused joins package shingle's feature kernels to package minhash's
// one-permutation bins, so that minhash.Hasher.SignText bins each feature the
// moment it is hashed: no feature buffer, no callback per chunk, and the hash
// and the bin update of neighbouring features overlap in the CPU.
//
// It holds only what the two packages must agree on: the bin state (Bins) and
// the reference loop (Add). The call goes the way the imports go: minhash
// imports shingle and calls shingle.Shingler.AddBins with a *Bins, so there is
// no hook to fill in and no mutable global. It is internal because Bins is
// not API: the public paths are shingle.Shingler.AppendFeatures and
// minhash.Hasher.SignText, and the tests of package minhash check that
// SignText gives exactly the signature of Sign over AppendFeatures.
package fused

// Bins is the state of one-permutation hashing (minhash.OnePermutation) with
// K = len(Mins) bins, K a power of two: a feature f has the value v = f·Mult
// (mod 2^64) and goes to bin v >> Shift, which keeps its minimum value.
// Shift is 64 − log2 K.
//
// Bins is a plain struct owned by one minhash.Hasher; it is not safe for
// concurrent use.
type Bins struct {
	Mins  []uint64 // the bins' minima; all ones is empty
	Mult  uint64   // the odd multiplier drawn from the seed
	Shift uint     // 64 − log2 len(Mins)

	// Feats, when not empty, receives the features themselves while they
	// fit, so that a short set can be densified without shingling the text
	// again; AddBins sets Kept to how many it stored. Only the paths where
	// it costs next to nothing keep them (a set of more than len(Feats)/4
	// character n-grams is binned by the vector kernel and keeps none):
	// Kept equals AddBins's count exactly when every feature was kept.
	Feats []uint64
	Kept  int
}

// Add puts the values v = f·mult of the features fs into mins, a power of two
// of bins, bin v >> shift. It is the reference loop for kernels that have
// their features in a buffer; the kernels in package shingle inline the same
// three lines.
//
// The minimum is taken without a branch: a document of a few thousand
// features lowers a bin's minimum a few times out of each dozen features that
// reach it, often enough that a branch mispredicts more than a conditional
// move costs (1.5 to 1.7 times slower on the bundled news sample).
func Add(mins []uint64, mult uint64, shift uint, fs []uint64) {
	if len(mins) == 0 {
		return
	}
	mask := uint64(len(mins) - 1) // lets the compiler drop the bounds check
	for _, f := range fs {
		v := f * mult
		i := v >> shift & mask
		mins[i] = min(v, mins[i])
	}
}
