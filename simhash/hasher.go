package simhash

import (
	"math/bits"

	"github.com/neardup/neardup/shingle"
)

// hasherChunk is the number of features a Hasher takes from the shingler at
// a time: 4 KiB, which stays in L1 between being written and read.
const hasherChunk = 512

// Hasher computes the fingerprints of texts, one document at a time, under
// one weighting: term frequency (TF: each occurrence of a feature votes with
// weight 1, so a feature weighs its count in the document; Fingerprint of
// the features) or, with an IDF, TF-IDF (each occurrence votes with the
// feature's IDF weight, so a feature weighs its count times its weight).
// These are sigfile's weight=tf and weight=tfidf; with TF-IDF the df field is
// DFFingerprint.
//
// The zero value computes TF fingerprints; NewHasher(idf) TF-IDF ones. A
// Hasher keeps about 10 KiB of counters and a 4 KiB feature buffer, reused,
// so after its first document it does not allocate; keep one per worker. It
// is not safe for concurrent use (the IDF it reads may be shared). Its
// results are deterministic: integer weights make every vote an exact sum,
// independent of feature order and of how the shingler chunks the text.
type Hasher struct {
	idf  *IDF
	b    Builder
	p    planes
	buf  []uint64
	n    int            // feature occurrences of the last text
	self *Hasher        // the Hasher sink is bound to; rebinding after a copy
	sink func([]uint64) // b.AddFeatures or addWeighted, bound once (no allocation per text)
}

// NewHasher returns a Hasher that weighs features by idf, or by term
// frequency alone if idf is nil.
func NewHasher(idf *IDF) *Hasher { return &Hasher{idf: idf} }

// DFFingerprint returns the fingerprint of the document-frequency table the
// Hasher weighs by (IDF.Fingerprint), or 0 for TF weighting.
func (h *Hasher) DFFingerprint() uint64 {
	if h.idf == nil {
		return 0
	}
	return h.idf.fp
}

func (h *Hasher) bind() {
	h.self = h
	if h.idf == nil {
		h.sink = h.b.AddFeatures
	} else {
		h.sink = h.addWeighted
	}
	if cap(h.buf) == 0 {
		h.buf = make([]uint64, 0, hasherChunk)
	}
}

// FingerprintText returns the fingerprint of text's features under sh (see
// package shingle), repeats included. Features are streamed from the
// shingler into the vote counters a chunk at a time, never all held at once.
// text is only read. It equals FingerprintFeatures(sh.AppendFeatures(nil,
// text)).
func (h *Hasher) FingerprintText(sh *shingle.Shingler, text []byte) uint64 {
	if h.self != h {
		h.bind()
	}
	if h.idf == nil {
		h.b.Reset()
		h.buf = sh.Stream(text, h.buf, h.sink)
		h.n = int(h.b.c.n) + h.b.npend
		return h.b.Sum()
	}
	h.p.reset()
	h.n = 0
	h.buf = sh.Stream(text, h.buf, h.sink)
	return h.p.sum()
}

// Features returns the number of feature occurrences, repeats included, of
// the last text (or multiset) fingerprinted, 0 before the first: a text
// without features has fingerprint 0, as has the empty set, so a caller
// tells the two apart by this count.
func (h *Hasher) Features() int { return h.n }

// FingerprintFeatures returns the fingerprint of a multiset of features
// (repeats count). With TF weighting it is Fingerprint(features); with
// TF-IDF it equals FingerprintWeighted(features, w) with w[j] the IDF weight
// of features[j] as a float64, exactly. features is only read.
func (h *Hasher) FingerprintFeatures(features []uint64) uint64 {
	if h.idf == nil {
		h.n = len(features)
		return Fingerprint(features)
	}
	h.p.reset()
	h.n = 0
	h.addWeighted(features)
	return h.p.sum()
}

func (h *Hasher) addWeighted(features []uint64) {
	h.n += len(features)
	x := h.idf
	var ws [hasherChunk]uint16
	for len(features) > 0 {
		fs := features[:min(len(features), len(ws))]
		features = features[len(fs):]
		// Look up every weight of the chunk first: the loads are
		// independent, so the CPU overlaps their cache misses, which a loop
		// that also counts each feature's votes would serialize.
		if x.rows == 2 { // the default
			lw := x.logWidth
			for i, f := range fs {
				ws[i] = max(x.w[cell(f, 0, lw)], x.w[cell(f, 1, lw)])
			}
		} else {
			for i, f := range fs {
				ws[i] = x.weight(f)
			}
		}
		h.p.addChunk(fs, ws[:len(fs)])
	}
}

// planes counts votes with integer weights of up to idfPlanes bits, one
// positional counter per bit of the weight:
//
//	Σ_f w_f·s_{f,i} = Σ_b 2^b · Σ_{f: bit b of w_f is 1} s_{f,i},
//
// and plane b's inner sum is 2·ones_b[i] − n_b, as for unit weights. A
// feature costs one carry-save step (amortized, a block of 16 at a time) per
// set bit of its weight, about 4 for typical weights, instead of 64 adds.
type planes struct {
	c     [idfPlanes]counter
	pend  [idfPlanes][blockWords]uint64
	npend [idfPlanes]uint8
	used  uint16 // planes touched since reset
}

func (p *planes) reset() {
	for u := p.used; u != 0; u &= u - 1 {
		b := bits.TrailingZeros16(u)
		p.c[b] = counter{}
		p.npend[b] = 0
	}
	p.used = 0
}

func (p *planes) add(f uint64, w uint16) {
	p.addChunk([]uint64{f}, []uint16{w})
}

// addChunk adds features fs with weights ws. Plane by plane, a branch-free
// pass packs the features whose weight has that bit set into the plane's
// pending buffer (every feature is stored; the count advances by the bit),
// and full blocks of 16 go to the plane's counter. A branch per set bit
// instead costs a misprediction on most features, since weights differ in
// how many bits they have.
func (p *planes) addChunk(fs []uint64, ws []uint16) {
	var used uint16
	for _, w := range ws {
		used |= w
	}
	p.used |= used
	ws = ws[:len(fs)]
	for u := used; u != 0; u &= u - 1 {
		b := bits.TrailingZeros16(u)
		pend := &p.pend[b]
		n := int(p.npend[b])
		for i, f := range fs {
			pend[n] = f
			n += int(ws[i] >> b & 1)
			if n == len(pend) {
				p.c[b].addBlocks(pend[:])
				n = 0
			}
		}
		p.npend[b] = uint8(n)
	}
}

// sum returns the fingerprint of the votes: bit i is 1 iff Σ_b 2^b·(2·ones_b[i]
// − n_b) > 0. It consumes the pending features; call reset before reuse.
func (p *planes) sum() uint64 {
	var v [64]int64
	var ones [64]uint64
	for u := p.used; u != 0; u &= u - 1 {
		b := bits.TrailingZeros16(u)
		c := &p.c[b]
		c.addTail(p.pend[b][:p.npend[b]])
		p.npend[b] = 0
		c.totals(&ones)
		n := int64(c.n)
		for i := range v {
			v[i] += (2*int64(ones[i]) - n) << b
		}
	}
	var fp uint64
	for i, x := range v {
		if x > 0 {
			fp |= 1 << i
		}
	}
	return fp
}
