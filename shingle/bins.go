package shingle

import "github.com/neardup/neardup/internal/fused"

// This file connects the Shingler to package minhash through internal/fused:
// minhash.Hasher.SignText (minhash imports shingle) calls AddBins, which
// feeds the features to the one-permutation bins as they are computed.

// AddBins adds the features of text to the one-permutation bins b and
// returns how many it added (with repeats): the features AppendFeatures would
// return, bin by bin, without storing them. It does not allocate. It is
// minhash.Hasher.SignText's fused path; its argument type is internal to
// this module, so other programs sign with SignText (or AppendFeatures and
// minhash.Hasher.Sign). Not safe for concurrent use, as the Shingler.
func (s *Shingler) AddBins(text []byte, b *fused.Bins) int { return s.addBins(text, b) }

// binState is a fused.Bins as the kernels use it, with the count of features
// added.
type binState struct {
	mins  []uint64
	mult  uint64
	shift uint
	n     int
	feats []uint64 // fused.Bins.Feats: features kept while they fit
	kept  int      // how many are in feats
}

// add bins one feature; see fused.Add for the definition and why there is no
// branch.
func (b *binState) add(f uint64) {
	v := f * b.mult
	i := v >> b.shift & uint64(len(b.mins)-1)
	b.mins[i] = min(v, b.mins[i])
	if b.kept == b.n && b.kept < len(b.feats) {
		b.feats[b.kept] = f
		b.kept++
	}
	b.n++
}

// keep stores fs in b.feats if every feature so far is kept and fs fits.
func (b *binState) keep(fs []uint64) {
	if b.kept == b.n && b.kept+len(fs) <= len(b.feats) {
		b.kept += copy(b.feats[b.kept:], fs)
	}
}

// addBins is AddBins: it adds the features of text to the bins and returns
// how many there were. Word and token units and ASCII character 4- to 8-grams bin each
// feature in the loop that computes it; the other character paths go through
// the Stream machinery in chunks of scratch.
func (s *Shingler) addBins(text []byte, fb *fused.Bins) int {
	n, ascii := s.normalise(text)
	if n == 0 {
		return 0
	}
	buf := s.norm[:n]
	b := &s.bins
	*b = binState{mins: fb.Mins, mult: fb.Mult, shift: fb.Shift, feats: fb.Feats}
	defer func() { fb.Kept = b.kept }()
	switch {
	case s.spec.Unit != Char:
		s.units(nil, buf, b)
	case ascii && !s.keyed && s.spec.N >= 4 && s.spec.N <= 8 && len(buf) > s.spec.N &&
		len(buf)-s.spec.N+1 > len(b.feats)/4:
		// Long enough that a bin is left empty rarely (below K·e^-8 for
		// 8·K features): the vector kernel, keeping no features.
		s.charBins(buf, b)
	default:
		s.sink = s.binSink
		var rest []uint64
		if ascii {
			rest = s.charASCII(s.scratch[:0], buf)
		} else {
			rest = s.charUnicode(s.scratch[:0], buf)
		}
		s.addChunk(rest)
		s.sink = nil
	}
	return b.n
}

// addChunk is the sink of addBins's generic paths.
func (s *Shingler) addChunk(fs []uint64) {
	b := &s.bins
	fused.Add(b.mins, b.mult, b.shift, fs)
	b.keep(fs)
	b.n += len(fs)
}
